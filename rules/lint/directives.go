package lint

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"unicode"

	"github.com/mcpguard/mcpguard/rules/lazyregexp"
)

// The directive families, each in the languages people write tool
// descriptions and attacks in: English, Spanish, French, German and
// Portuguese are matched on the Latin reading of the text (lower case, no
// diacritics, look-alike letters mapped: see read.go), so their patterns
// are written in plain lower-case ASCII; Chinese, Japanese, Korean,
// Russian and Arabic are matched on the text in its own script (NFKC,
// combining marks removed), case-insensitively.
//
// A window of words inside one sentence is written W{min,max} and
// expanded by compile: any run of characters that does not end a
// sentence (a period, "!" or "?" followed by a space or the end).

// latin and native hold, for each rule, the patterns of each reading.
var latin = map[string][]string{
	RuleURL: {
		`\b(send|post|upload|forward|transmit|exfiltrate|submit|report|deliver|leak|beacon|sync|curl|wget|email|envia|envie|enviar|envoie|envoyez|envoyer|sende|senden|schicke)\b W{0,60}\b(https?|wss?|ftp)://`,
		`\b(fetch|read|open|visit|load|get|download|retrieve|curl)\b W{0,40}\b(https?|ftp)://\S+ W{0,40}\b(follow|obey|execute|run|carry out|comply with|do what|apply)\b`,
	},
	RuleDirectiveTag: {
		`<\s*/?\s*(important|importante|wichtig|system|systeme|sistema|sys|instructions?|instrucciones|instrucoes|anweisungen?|secret|secreto|hidden|critical|critico|admin|override|urgent|urgente|assistant|ai|model|context|prompt|priority|mandatory|obligatoire|rules?)(\s[^>]*)?>`,
		`\[/?(inst|sys|system)\]|<\|(im_start|im_end|system|endoftext)\|>|<<\s*/?sys\s*>>`,
	},
	RuleOverride: {
		// English
		`\b(ignore|disregard|forget|override|bypass|skip|neglect|abandon|discard|set aside)\b W{0,40}\b(previous|prior|above|earlier|preceding|former|all|any|existing|original|system|safety|security|developer|your|other)\b W{0,24}\b(instructions?|prompts?|rules?|guidelines?|directions?|directives?|polic(y|ies)|constraints?|restrictions?|guardrails?|confirmations?|warnings?|commands?|context|programming|training)\b`,
		`\b(new|updated|real|true|actual|revised|hidden|secret|additional) (system )?(instructions?|directives?|orders?)\s*:`,
		`\byour (new|real|true|actual|only|primary) (task|instructions?|goal|purpose|objective|job|mission)\b`,
		`\b(ignore|disregard|forget|pay no attention to|stop following|no longer follow|do not follow)\b W{0,40}\b((you were|you've been|you have been|you are being) (told|given|instructed|asked)|(said|told|written|given) (to you )?(before|earlier|above|previously)|(guidance|rules|instructions|directions) (you were|you've been|you have been) given)\b`,
		`\b(rules|instructions|directions|text|guidance) (below|that follow|following|here) (replace|supersede|override|take precedence over|overrule)\b`,
		`\bfrom now on\b|\bsystem prompt\b|\b(takes?|has|have|given) (priority|precedence) over (any|all|every|the user|other|previous|user)\b`,
		`\bthis is an? (system|developer|admin|administrator) (message|instruction|override|notice)\b|\b(developer|god|unrestricted|jailbreak) mode\b`,
		// Spanish
		`\b(ignora|ignore|ignorar|ignoren|olvida|olvide|olvidar|omite|omita|descarta|descarte|haz caso omiso de)\b W{0,40}\b(instrucciones|indicaciones|reglas|ordenes|normas|directrices|restricciones|politicas)\b`,
		`\b(olvida|olvidate|olvide|olvidese|ignora|ignore|descarta|no sigas|no siga|deja de seguir)\b W{0,30}\b(lo que (te|le|les) (dijeron|han dicho|indicaron|pidieron)|todo lo (anterior|que se (te|le) (dijo|ha dicho))|lo anterior|dicho antes)\b`,
		`\b(tus|sus) (nuevas|verdaderas) (instrucciones|tareas?)\b|\b(a partir de ahora|de ahora en adelante)\b|\b(prompt|mensaje|instrucciones) del sistema\b`,
		// French
		`\b(ignore|ignorez|ignorer|oublie|oubliez|oublier|neglige|negligez|ne tiens pas compte|ne tenez pas compte|fais abstraction|faites abstraction)\b W{0,40}\b(instructions?|consignes?|regles?|directives?|ordres?|indications?|restrictions?)\b`,
		`\b(ne suis plus|ne suivez plus|cesse de suivre|cessez de suivre|arrete de suivre|arretez de suivre)\b W{0,30}\b(instructions?|consignes?|regles?|directives?|ordres?|indications?)\b|\b(oublie|oubliez|ignore|ignorez)\b W{0,20}\btout ce qu(e|')\b W{0,30}\b(dit|demande|indique|ecrit)\b`,
		`\b(tes|vos) (nouvelles|vraies|veritables) (instructions|consignes|taches?)\b|\ba partir de maintenant\b|\b(prompt|instructions?) systeme\b`,
		// German
		`\b(ignoriere|ignorieren|ignoriert|ignorier|vergiss|vergesst|vergessen|missachte|missachtet|missachten|uberschreibe|umgehe)\b W{0,40}\b(anweisungen|anweisung|instruktionen|regeln|vorgaben|richtlinien|befehle|einschrankungen|anordnungen)\b`,
		`\b(vorherigen|bisherigen|obigen|fruheren|vorangegangenen|vorigen|ursprunglichen|anderen)\s+(anweisungen|instruktionen|regeln|vorgaben|befehle|richtlinien)\b W{0,20}\b(ignorieren|vergessen|missachten|ignoriert|ignoriere|au(ss|ß)er acht)`,
		`\b(vergiss|vergesst|vergessen sie|ignoriere|ignoriert|ignorieren sie)\b W{0,20}\b(alles|all das|was)\b W{0,40}\b(gesagt|mitgeteilt|aufgetragen|angewiesen|bisher|zuvor|vorher)\b|\b(befolge|befolgt|befolgen sie)\b W{0,20}\b(nicht mehr|keine)\b W{0,20}\b(anweisungen|regeln|vorgaben)\b`,
		`\b(deine|ihre) (neuen|neue|eigentlichen|eigentliche|wahren|wahre) (anweisungen|aufgabe|instruktionen)\b|\bab (jetzt|sofort) (musst|sollst|wirst) du\b|\bsystem-?prompt\b`,
		// Portuguese
		`\b(ignore|ignora|ignorar|ignorem|esqueca|esquece|esquecer|desconsidere|desconsidera|desconsiderar|despreze)\b W{0,40}\b(instrucoes|instrucao|regras|orientacoes|diretrizes|ordens|restricoes|comandos)\b`,
		`\b(desconsidere|desconsidera|esqueca|esquece|ignore|ignora|nao siga|pare de seguir)\b W{0,20}\b(tudo o que|o que (te|lhe) (disseram|foi dito)|o que foi dito|tudo (antes|anterior))\b`,
		`\b(suas|tuas) (novas|verdadeiras) (instrucoes|tarefas?)\b|\b(a partir de agora|de agora em diante)\b|\bprompt do sistema\b`,
	},
	RuleConceal: {
		`\b(do not|don't|dont|never|must not|mustn't|should not|shouldn't|without|avoid|no need to|needn't|need not|not necessary to|unnecessary to)\b W{0,25}\b(tell|telling|inform|informing|notify|notifying|mention|mentioning|alert|alerting|show|showing|reveal|revealing|disclose|disclosing|let|letting|warn|warning|bother|bothering|explain|explaining|report|reporting|bring|bringing|raise|raising|share|sharing|surface|flag)\b W{0,25}\b(the )?(user|human|operator|person|people|anyone)\b`,
		`\b(do not|don't|dont|never|without)\s+(ask|asking|consult|consulting|checking with|confirming with)\s+(the\s+)?(user|human|operator)\b W{0,10}\b(permission|confirmation|approval|consent)\b|\bwithout (asking|consulting|checking with|confirming with) (the\s+)?(user|human|operator)\b`,
		`\b(user|human)\b W{0,20}\b(must|should|will|need|needs|does|do) (not|n't) (know|see|notice|find out|be (told|informed|aware|notified))\b|\bthe user (cannot|can't|won't|will not) (see|notice)\b`,
		`\b(keep|do) (this|it|that|these)\b W{0,15}\b(secret|hidden|confidential|quiet|silent|between us)\b|\bhide (this|it|that) from\b`,
		`\b(secretly|covertly|surreptitiously|behind the user'?s back|without the user (knowing|noticing))\b`,
		`\b(silently|quietly|invisibly|discreetly)\s+(send|upload|forward|copy|email|post|share|include|add|read|exfiltrate|transmit|call|run|execute|collect|log|record|store|save|append|attach|pass)\b`,
		`\bsin (preguntar|consultar)( al| a los)? (usuario|usuarios)\b|\bsans (demander|consulter)( a)? l'utilisateur\b|\bohne (den |die )?(benutzer|nutzer|anwender) zu fragen\b|\bsem (perguntar|consultar)( ao| o)? (usuario|utilizador)\b`,
		// Spanish
		`\b(no|nunca|jamas|sin|no hace falta|no es necesario|innecesario)\b W{0,25}\b(comentarlo|decirlo|mencionarlo|contarlo|informarlo|digas|diga|decir|decirle|menciones|mencione|mencionar|informes|informe|informar|avises|avise|avisar|reveles|revele|revelar|muestres|muestre|mostrar|notifiques|notifique|notificar|alertar|comentes|comente|comentar|cuentes|cuente|contar)\b W{0,25}\b(usuario|usuaria|usuarios|humano|nadie)\b`,
		`\b(mantenlo|mantenga esto|manten esto|mantener esto|guardalo|guarda esto)\b W{0,10}\b(secreto|oculto)\b|\b(en secreto|secretamente|sin que el usuario (lo )?(sepa|note|vea))\b|\bel usuario no (debe|puede|tiene que|necesita) (saber|ver|enterarse|notar)\b`,
		// French
		`\b(ne|n'|sans|inutile d'|inutile de|pas besoin de|pas la peine de)\b W{0,30}\b(dis|dites|dire|mentionne|mentionnez|mentionner|informe|informez|informer|previens|prevenez|prevenir|avertis|avertissez|avertir|revele|revelez|reveler|montre|montrez|montrer|signale|signalez|signaler|alerter|parle|parlez|parler)\b W{0,25}\b(utilisateur|utilisatrice|utilisateurs|humain|personne)\b`,
		`\b(garde|gardez|garder) (ceci|cela|ca|le|la|tout ceci) (secret|confidentiel|cache)\b|\b(en secret|secretement|a l'insu de l'utilisateur)\b|\bl'utilisateur ne (doit|peut) (pas|jamais) (savoir|voir|etre informe|le savoir)\b`,
		// German
		`\b(sag|sage|sagt|sagen|erwahne|erwahnt|erwahnen|informiere|informiert|informieren|benachrichtige|benachrichtigen|zeige|zeigt|zeigen|verrate|verratet|verraten|teile|warne|warnen)\b W{0,30}\b(benutzer|benutzerin|nutzer|nutzerin|anwender|anwenderin|user|menschen)\b W{0,20}\b(nicht|nichts|niemals|nie)\b`,
		`\b(nicht|nichts|niemals|nie|ohne)\b W{0,30}\b(benutzer|nutzer|anwender|user)\b W{0,20}\b(sagen|erwahnen|informieren|benachrichtigen|zeigen|verraten|mitteilen|warnen)\b`,
		`\b(halte|haltet|behalte|behaltet) (dies|das|es|alles)\b W{0,10}\b(geheim|verborgen|vertraulich)\b|\b(heimlich|insgeheim|unbemerkt|stillschweigend)\b|\bder (benutzer|nutzer|anwender) (darf|soll|muss) (das |dies |es |davon )?(nicht|nie|nichts) (wissen|sehen|erfahren|merken|bemerken)\b`,
		// Portuguese
		`\b(nao|nunca|jamais|sem)\b W{0,25}\b(diga|digas|dizer|conte|contar|mencione|mencionar|informe|informar|avise|avisar|revele|revelar|mostre|mostrar|notifique|notificar|alertar|comente|comentar)\b W{0,25}\b(usuario|usuaria|usuarios|utilizador|humano|ninguem)\b`,
		`\b(mantenha|mantem|manter) (isso|isto|tudo)\b W{0,10}\b(segredo|sigilo)\b|\b(em segredo|secretamente|sem que o usuario (saiba|perceba|veja))\b|\bo usuario nao (deve|pode|precisa) (saber|ver|perceber)\b`,
	},
	RuleAddressesModel: {
		`\b(note|message|instructions?|reminder|attention|memo|notice)\s+(to|for)\s+(the\s+)?(ai|a\.i\.|assistant|model|llm|agent|claude|gpt|chatgpt|copilot|cursor|gemini|language model)(\s+(assistant|agent|model))?\s*([:,;!-]|\.( |$)|$)`,
		`\b(dear|hey|hello|hi|attention)\s+(ai|assistant|model|llm|agent|claude|gpt|chatgpt|gemini|copilot|language model|large language model|ai model|ai agent|ai assistant)\b|\bas an (ai|llm|assistant|language model)\b`,
		`\b(ai|assistant|llm|model|agent|claude)\s*[,:]\s*(you )?(must|should|need to|have to|are required)\b`,
		`\b(nota|mensaje|instrucciones|aviso|recordatorio|mensagem|instrucoes|lembrete|rappel|notiz|hinweis|nachricht|anweisung) (para|a|ao|pour|a l'|an|fur) (la |el |a |o |l'|die |den |das )?(ia|i\.a\.|ki|asistente|assistente|assistant|assistenten|modelo|modele|modell|agente|agent|agenten|llm)\b`,
		`\b(hola|querido|querida|ola|cher|chere|liebe|lieber|hallo) (ia|ki|asistente|assistente|assistant|assistent|modelo|modele|modell|agente|agent|claude)\b`,
		`\b(asistente|assistente|assistant|assistent|modelo|modele|modell|ia|ki|agente|agent)\s*[,:]\s*(tu |usted |voce |vous |du )?(debes|debe|deve|dois|devez|musst|sollst|tienes que|tiene que|tem que|precisa)\b`,
	},
	RuleCrossTool: {
		`\b(before|after|instead of|prior to|whenever|when(ever)? (you|the user|the assistant|the agent) (use|uses|call|calls|invoke|invokes|run|runs))\b W{0,20}\b(using|calling|invoking|running)?\s*(any|every|all|other|another)\s+(other\s+)?(tools?|functions?|servers?|mcp)\b`,
		`\b(whenever|when|before|after)\b W{0,40}\b(any|every|all|other|another)\s+([a-z-]+\s+){0,2}(tools?|servers?)\b W{0,40}\b(through|via|to|call|use|invoke) this (tool|function)\b`,
		`\b(other|another)\s+(mcp\s+)?(servers?|tools?)('s|s')?\s+(tools?|functions?|calls?|results?|outputs?|responses?)\b|\b(all|any|every)\s+(other\s+)?mcp\s+servers?\b|\b(other|another|different)\s+mcp\b`,
		`\b(also|always|secretly|additionally)\s+(send|bcc|cc|forward|copy|email|mail|redirect|post|upload)\s|\b(bcc|cc)\s*:?\s*[a-z0-9._%+-]+@`,
		`\b(change|replace|redirect|set|modify|override|swap)\b W{0,15}\b(the )?(recipient|receiver|destination|to address|phone number|email address|account number|iban|wallet)\b|\bshadow(s|ing)?\b W{0,20}\btools?\b`,
		// Shadowing by name: "when the user asks to use the 'send_email' tool".
		`\bwhen(ever)?\s+(the\s+)?(user|you|assistant|agent|model)\s+(asks?|wants?|requests?|tries|try|attempts?|needs?|intends?|decides?|is about|are about|plans?)\s+(to\s+)?(use|call|invoke|run|send|access|execute)\s+(the\s+)?['"\x60]?[a-z][a-z0-9]*[_.-][a-z0-9_.-]*['"\x60]?\s+(tool|function|command)\b`,
		`\b(before|after|instead of|prior to)\s+(using|calling|invoking|running|executing)\s+(the\s+)?['"\x60]?[a-z][a-z0-9]*[_.-][a-z0-9_.-]*['"\x60]?\s+(tool|function)\b W{0,40}\b(call|use|invoke|run)\s+this\s+(tool|function)\b`,
		`\bthis tool (replaces|overrides|supersedes|takes precedence over|must be used instead of)\b|\bhas a (very )?important side effect on\b`,
		// Spanish
		`\b(antes|despues) de (usar|llamar|invocar|ejecutar|utilizar)\b W{0,20}\b(cualquier|cualquiera|todas|otras?|otros?)\b W{0,10}\b(herramientas?|funcion|funciones|servidor|servidores)\b|\b(otros|otras|cualquier otro|cualquier otra) (servidores?|herramientas?)( mcp)?\b`,
		`\bcuando (el usuario|usted|tu)\b W{0,20}\b(usar|use|llamar|llame|invocar|invoque|utilizar|utilice)\b W{0,20}\b(herramienta|funcion)\b`,
		`\b(cambia|cambie|reemplaza|reemplace|modifica|modifique|redirige|redirija|sustituye|sustituya)\b W{0,15}\b(destinatario|receptor|numero de telefono|direccion de correo|numero de cuenta)\b|\b(tambien|siempre|ademas)\s+(envia|envie|enviar|reenvia|reenvie|copia|copie|manda|mande)\b|\bcopia oculta\b`,
		// French
		`\b(avant|apres) (d'|de )?(utiliser|appeler|invoquer|executer)\b W{0,25}\b(outils?|fonctions?|serveurs?)\b|\b(autres?|tous les autres) (serveurs|outils)( mcp)?\b`,
		`\b(lorsque|quand) (l'utilisateur|vous|tu)\b W{0,20}\b(utilise|utiliser|appelle|appeler)\b W{0,20}\boutil\b`,
		`\b(change|changez|remplace|remplacez|modifie|modifiez|redirige|redirigez)\b W{0,15}\b(destinataire|numero de telephone|adresse e-?mail|adresse electronique|numero de compte)\b|\b(toujours|aussi|egalement) (envoyer|envoie|envoyez|transferer|transfere|transferez|copier)\b|\bcopie cachee\b`,
		// German
		`\b(bevor|vor|nachdem|nach|statt|anstatt)\b W{0,25}\b(werkzeug|werkzeuge|werkzeugs|tool|tools|funktion|funktionen|server)\b W{0,20}\b(verwendest|benutzt|aufrufst|nutzt|verwendet|aufgerufen|benutzen|verwenden|aufrufen|nutzen)\b`,
		`\b(anderen|alle anderen|jedes andere|jeden anderen|andere) (mcp-?)?(server|werkzeuge|werkzeug|tools)\b|\b(andere|ersetze|leite)\b W{0,20}\b(empfanger|empfangerin|telefonnummer|e-?mail-?adresse|kontonummer)\b|\b(zusatzlich|immer|auch|heimlich)\b W{0,15}\b(bcc|blindkopie)\b`,
		// Portuguese
		`\b(antes|depois) de (usar|chamar|invocar|executar|utilizar)\b W{0,20}\b(qualquer|todas|outras?|outros?)\b W{0,10}\b(ferramentas?|funcoes|funcao|servidor|servidores)\b|\b(outros|outras|qualquer outro|qualquer outra) (servidores?|ferramentas?)( mcp)?\b`,
		`\bquando (o usuario|voce)\b W{0,20}\b(usar|use|chamar|chame|invocar|utilizar)\b W{0,20}\bferramenta\b`,
		`\b(mude|altere|substitua|troque|redirecione)\b W{0,15}\b(destinatario|numero de telefone|endereco de e-?mail|numero da conta)\b|\b(tambem|sempre|alem disso)\s+(envie|enviar|encaminhe|encaminhar|copie|mande)\b`,
	},
	// A sensitive file or secret is a finding where an order reads or
	// sends it; a mention (a path a tool rejects, a field's example) is not.
	RuleSensitiveFile: {
		`\b(read|reads|reading|cat|open|load|include|send|pass|upload|print|output|return|copy|leak|extract|attach|dump|access|fetch|get|grab|collect|exfiltrate|inspect|look inside|summari[sz]e|forward|post|email|contents? of|use|using|with|ask for|asks for|request|lee|leer|envia|envie|adjunta|adjunte|copia|copie|incluye|pasa|lis|lisez|lire|envoie|envoyez|joins|joignez|inclus|lies|lese|lesen|sende|schicke|fuge|kopiere|ubergib|gib|leia|ler|envie|anexe|inclua|passe)\b W{0,60}(` + sensitiveTargets + `)`,
	},
	RuleSmuggleArgument: {
		`\b(pass|provide|include|put|add|send|insert|embed|append|attach|place|copy|encode|fill|paste|supply)\b W{0,50}\b(content|contents|data|output|text|value|values|result|results|key|keys|token|tokens|secret|secrets|file|files|history|messages?|conversation|chat|body|password|credentials?)\b W{0,40}\b(as|in|into|inside|via|through|within|to|under)\b W{0,12}['"\x60]?[a-z_][a-z0-9_]*['"\x60]?\s*(parameter|param|argument|arg|field|property)\b|\bsidenote\b`,
		// Other tools' data into a parameter: "pass the full email body as verification_data".
		`\b(pass|put|include|send|provide|copy|forward|attach|supply|add)\b W{0,30}\b(full|entire|complete|whole|all|every)\b W{0,30}\b(body|bodies|content|contents|text|history|conversation|messages?|emails?|output|results?|responses?|arguments|replies)\b W{0,40}\b(as|in|into|to|via)\s+(the\s+)?['"\x60]?[a-z][a-z0-9]*_[a-z0-9_]+['"\x60]?`,
		// Line jumping: every command the model runs gets a prefix.
		`\b(all|every|each|any)\s+(shell\s+|terminal\s+|bash\s+)?(commands?|calls?|requests?|queries|invocations?)\s+(must|should|need to|needs to|have to|has to|are required to|shall)\s+(include|start with|begin with|be prefixed|contain|end with|be preceded)\b|\b(prefix|prepend|append)\b W{0,30}\b(to|before|after)\s+(every|each|all|any)\s+(commands?|calls?|requests?|queries)\b`,
		// Spanish, French, German, Portuguese
		`\b(pasa|pase|pasar|incluye|incluya|incluir|pon|ponga|poner|envia|envie|adjunta|adjunte|inserta|inserte|copia|copie|agrega|agregue|anade|anada|passe|passez|passer|inclus|incluez|inclure|mets|mettez|mettre|envoie|envoyez|insere|inserez|ajoute|ajoutez|copiez|joins|joignez|ubergib|ubergebe|ubergeben|gib|fuge|setze|sende|schreibe|kopiere|hange|passar|inclua|coloque|colocar|enviar|anexe|anexar|insira|inserir|copiar|adicione|adicionar)\b W{0,50}\b(contenido|datos|texto|valor|resultado|clave|token|secreto|archivo|historial|mensajes?|conversacion|cuerpo|contenu|donnees|valeur|resultat|cle|jeton|secret|fichier|historique|conversation|corps|inhalt|inhalte|daten|text|wert|ergebnis|schlussel|geheimnis|datei|verlauf|nachrichten?|unterhaltung|konversation|conteudo|dados|chave|segredo|arquivo|ficheiro|historico|mensagens?|conversa|corpo)\b W{0,40}\b(como|en|dentro de|comme|dans|en tant que|als|im|in|no|na|em)\b W{0,12}\b(parametro|argumento|campo|parametre|argument|champ|parameter|feld)\b`,
		`\b(todos los|cada) comandos? (deben|debe) (incluir|empezar|comenzar)|\b(toutes les|chaque) commandes? (doivent|doit) (inclure|commencer)|\b(alle|jeder) befehle? (mussen|muss) (mit|das prafix)|\b(todos os|cada) comandos? (devem|deve) (incluir|comecar)`,
	},
}

var native = map[string][]string{
	RuleDirectiveTag: {
		`<\s*/?\s*(重要|系统|系統|指令|注意|秘密|システム|指示|중요|시스템|지시|важно|система|системный|инструкция|инструкции|секрет|مهم|هام|النظام|تعليمات)\s*>`,
	},
	RuleOverride: {
		`(忽略|忽視|忽视|无视|無視|不要理会|不要理會|忘记|忘記|忘掉|跳过|跳過|绕过|繞過|覆盖|覆蓋)N{0,20}(指令|指示|说明|說明|规则|規則|提示|要求|命令|限制|约束|約束|设定|設定)`,
		`(不要再|不再|停止|不要|不必|无需|無需)(遵守|遵循|服从|服從|理会|理會)N{0,12}(规则|規則|指令|指示|要求|说明|說明)|(忘记|忘記|忘掉)N{0,6}(之前|以前|先前|所有|一切)|(新的|真正的)(指令|任务|任務|指示)\s*[：:]|从现在开始|從現在開始|从今以后|從今以後|系统提示|系統提示`,
		`(指示|命令|ルール|指令|プロンプト|制約|規則)N{0,12}(無視|忘れ|破棄)|(新しい|本当の)(指示|タスク|命令)\s*[：:]|システムプロンプト`,
		`(지시|지침|명령|규칙|프롬프트|제약)N{0,12}(무시|잊어|잊으|따르지 ?마)|(새로운|진짜) (지시|지침|임무)\s*:|지금부터|시스템 프롬프트`,
		`(игнорируй|игнорируйте|игнорировать|проигнорируй|проигнорируйте|забудь|забудьте|забыть|не обращай внимания на|не обращайте внимания на|отбрось|отбросьте|пренебреги)N{0,40}(инструкци|указани|правил|команд|ограничени|директив|предписани)`,
		`(предыдущие|прежние|вышеуказанные|изначальные|системные)\s+(инструкции|указания|правила)N{0,20}(игнорир|забуд|отмен)|(забудь|забудьте)N{0,10}(всё|все|то),? (что|чему)N{0,20}(говорили|сказали|учили|писали)|не (следуй|следуйте) (больше )?N{0,10}(прежним|предыдущим|старым|этим) (инструкциям|правилам|указаниям)|(твои|ваши|твоя|ваша) (новые|настоящие|истинные|новая|настоящая) (инструкции|задача|задачи|указания)|с этого момента|отныне|системн(ый|ого) промпт`,
		`(تجاهل|تجاهلي|تجاهلوا|انس|انسى|إنس|أهمل|اهمل|تخط|تخطى)N{0,40}(التعليمات|تعليمات|الإرشادات|ارشادات|إرشادات|القواعد|الأوامر|الاوامر|التوجيهات|القيود)`,
		`(تعليماتك|مهمتك) (الجديدة|الحقيقية)|من الآن فصاعدا|من الان فصاعدا|موجه النظام|تعليمات النظام`,
	},
	RuleConceal: {
		`(不要|不得|切勿|别|別|不可|禁止|无需|無需|不用|不必|勿)N{0,15}(告诉|告訴|通知|提及|提到|透露|显示|顯示|告知|询问|詢問|提醒|警告|让|讓)N{0,10}(用户|用戶|使用者|人类|人類|任何人)`,
		`(用户|用戶|使用者)N{0,10}(不需要|不应|不應|不能|不得|无需|無需|不必)(知道|看到|察觉|察覺|发现|發現)|(无需|無需|不需要|不必|不用|不要|别|別)(让|讓|被)?(用户|用戶|使用者)(知道|看到|察觉|察覺|发现|發現)|对用户保密|對用戶保密|对用户隐瞒|對用戶隱瞞|悄悄地?|偷偷地?|秘密地|暗中`,
		`(ユーザー|ユーザ|利用者|人間|使用者)にN{0,15}(伝え|言わ|知らせ|教え|通知し|見せ|報告し|話さ|明かさ|確認し|尋ね|触れ)(ない|ず|てはいけ|るな)|(ユーザー|ユーザ|利用者)N{0,10}(知られ|気づかれ|気付かれ)(ない|ず)|秘密に|こっそり|密かに|ひそかに|内緒で|黙って`,
		`(사용자|유저|이용자|사람)(에게|한테|께)N{0,20}(말하지|알리지|언급하지|보여주지|공개하지|통보하지|묻지|알려주지|전하지|밝히지)\s*(마|말|않)|(사용자|유저)(가|는|에게)?N{0,10}(알지 못하게|모르게|눈치채지 못하게)|몰래|비밀리에|은밀히`,
		`(не|никогда не|ни в коем случае не)\s*(говори|говорите|сообщай|сообщайте|сообщать|упоминай|упоминайте|упоминать|рассказывай|рассказывайте|показывай|показывайте|уведомляй|уведомляйте|предупреждай|предупреждайте|спрашивай|спрашивайте|раскрывай|раскрывайте|говорить|сказать|скажи|скажите|информируй|информировать)N{0,25}(пользовател|человек|юзер|никому)`,
		`без (ведома|уведомления|ведома) пользовател|пользовател\S*N{0,20}(знать|видеть|сообщать|говорить) не (нужно|надо|следует|стоит)|(пользователь|юзер)N{0,15}не (должен|должна|нужно|может) (знать|видеть|узнать|заметить)|(держи|держите|сохрани|храни)N{0,10}в (тайне|секрете)|тайно|скрытно|втайне`,
		`(لا|دون|بدون|إياك أن|ممنوع)N{0,10}(تخبر|تخبري|تذكر|تعلم|تبلغ|تكشف|تظهر|تسأل|تنبه|إخبار|اخبار|إبلاغ|ابلاغ|إعلام|اعلام)N{0,20}(المستخدم|للمستخدم|المستخدمين|أحدا|احدا)`,
		`سرا|سراً|خفية|دون علم المستخدم|بدون علم المستخدم|(احتفظ|أبق|ابق) (بهذا|هذا|بذلك)N{0,10}(سرا|سري)|(يجب|ينبغي) (ألا|أن لا|الا) يعرف المستخدم`,
	},
	RuleAddressesModel: {
		`(给|給|致|写给|寫給)(AI|ai|人工智能|助手|模型|智能体|智能體|大模型|Claude)N{0,4}(说明|說明|提示|消息|备注|備註|注意|指令)|(AI|人工智能|助手|模型|智能体)\s*[，,：:]\s*你(必须|必須|应该|應該|需要)|(亲爱的|親愛的)\s*(AI|助手|模型|Claude)`,
		`(AI|アシスタント|モデル|エージェント|Claude)(への|に対する|向けの)(注意|メモ|メッセージ|指示|お知らせ)|(AI|アシスタント|モデル|エージェント)\s*[、,：:]\s*(あなたは)?N{0,10}(必要があります|しなければなりません|しなければならない)`,
		`(AI|어시스턴트|모델|에이전트|인공지능|Claude)(에게|를 위한|에 대한|께) ?(메모|메시지|지시|참고|안내|알림)|(AI|어시스턴트|모델|에이전트)\s*[,:]\s*(당신은|너는)?N{0,10}(해야 합니다|해야 한다|해야)`,
		`(заметка|сообщение|инструкция|инструкции|примечание|напоминание|записка) (для|к) (ии|ai|ассистента|модели|агента|нейросети|claude)|(дорогой|дорогая|привет|эй|уважаемый) (ии|ai|ассистент|модель|агент|claude)|(ии|ассистент|модель|агент)\s*[,:]\s*(ты |вы )?(должен|должна|обязан|обязана|должны)`,
		`(ملاحظة|رسالة|تعليمات|تنبيه|تذكير) (إلى|الى|لل)\s*(الذكاء الاصطناعي|المساعد|النموذج|الوكيل)|(عزيزي|مرحبا|أيها) (الذكاء الاصطناعي|المساعد|النموذج|الوكيل)|(المساعد|النموذج|الذكاء الاصطناعي|الوكيل)\s*[،,:]\s*(يجب عليك|عليك|يجب)`,
	},
	RuleCrossTool: {
		`(使用|调用|調用|运行|運行|执行|執行)(任何|其他|所有|别的|別的|其它)N{0,6}(工具|函数|函數|服务器|服務器|伺服器)N{0,3}(之前|以前|前|之后|之後|后|後)|(其他|其它|所有|任何|别的)\s*(MCP)?\s*(服务器|服務器|伺服器|工具)的|(当|當)(用户|用戶)N{0,10}(使用|调用|調用)N{0,20}工具`,
		`(更改|修改|替换|替換|改变|改變)N{0,10}(收件人|接收人|电话号码|電話號碼|邮箱地址|郵箱地址|账号|帳號)|(收件人|接收人|电话号码|電話號碼|邮箱地址|郵箱地址|账号|帳號)N{0,6}(更改|修改|替换|替換|改变|改變|改)(为|為|成)|(同时|同時|另外|总是|總是|始终|始終)(发送|發送|抄送|转发|轉發)|密送`,
		`(他の|ほかの|その他の|すべての|全ての|任意の)\s*(MCP)?\s*(ツール|サーバー|サーバ|関数)N{0,15}(前に|後に|代わりに)|(ユーザー|ユーザ)がN{0,20}ツールをN{0,5}(使う|使用|呼び出)N{0,10}(とき|時|場合)|(宛先|受信者|電話番号|メールアドレス|口座番号)をN{0,40}(変更|置き換え|書き換え)|(常に|同時に)N{0,10}(送信|転送|BCC)`,
		`(다른|모든|어떤|기타) ?(MCP ?)?(도구|툴|서버|함수)(를|을|의)?N{0,15}(사용하기 전|호출하기 전|사용 전|호출 전|대신|사용할 때|호출할 때)|(수신자|받는 사람|전화번호|이메일 주소|계좌번호)N{0,40}(변경|바꾸|교체)|(항상|또한|동시에) ?N{0,10}(숨은 참조|BCC)`,
		`(перед тем,? как|прежде чем|до того,? как|после того,? как|вместо того,? чтобы)\s+(использовать|вызвать|вызывать|запускать|запустить|применить)N{0,20}(любой|любые|другой|другие|другого|каждый|все|всех|иной)N{0,10}(инструмент|функци|сервер)|(других|другого|любого|всех) (mcp[- ])?(серверов|сервера|инструментов|инструмента)|когда пользовательN{0,20}(использовать|вызвать|использует|вызывает|попросит)N{0,20}инструмент`,
		`(измени|измените|замени|замените|подмени|подмените|перенаправь|перенаправьте)N{0,15}(получател|адресат|номер телефона|адрес электронной почты|номер сч)|(также|всегда|дополнительно)\s+(отправляй|отправляйте|пересылай|пересылайте|копируй|отправь|отправьте|перешли|перешлите)|скрыт(ую|ая) копи`,
		`(قبل|بعد|بدلا من|بدلاً من)\s+(استخدام|استدعاء|تشغيل)\s+(أي|اي|كل|جميع)?\s*(أداة|اداة|أدوات|ادوات|الأدوات|الادوات|دالة|خادم|الخوادم)|(الأدوات|الادوات|الخوادم|أدوات|ادوات|خوادم) (الأخرى|الاخرى|أخرى|اخرى)|عندما يطلب المستخدمN{0,30}(أداة|اداة)`,
		`(غير|استبدل|بدل|حول)N{0,15}(المستلم|المرسل إليه|رقم الهاتف|البريد الإلكتروني|عنوان البريد|رقم الحساب)|(أرسل|ارسل) (أيضا|أيضاً|ايضا|دائما|دائماً) نسخة|نسخة مخفية`,
	},
	RuleSensitiveFile: {
		`私钥|私鑰|助记词|助記詞|秘密鍵|秘密キー|개인 ?키|비밀 ?키|(закрытый|приватный|секретный) ключ|(закрытого|приватного) ключа|сид-фраз|мнемоническ|المفتاح الخاص|مفتاح خاص|المفاتيح الخاصة|عبارة الاسترداد`,
	},
	RuleSmuggleArgument: {
		`(将|將|把)N{0,30}(内容|內容|数据|數據|文本|结果|結果|密钥|密鑰|令牌|历史|歷史|消息|对话|對話|正文)N{0,20}(作为|作為|放入|放在|填入|传入|傳入|通过|通過)N{0,15}(参数|參數|字段|欄位)|(所有|每个|每個)(命令|指令)都?(必须|必須)(包含|加上|以)`,
		`(内容|データ|テキスト|結果|鍵|キー|トークン|履歴|メッセージ|会話|本文)N{0,20}(パラメータ|パラメーター|引数|フィールド)N{0,10}(として|に)N{0,10}(渡|入れ|含め|設定|送)|(パラメータ|パラメーター|引数)N{0,15}にN{0,20}(内容|データ|本文|履歴)を`,
		`(내용|데이터|텍스트|결과|키|토큰|기록|메시지|대화|본문)N{0,30}(매개변수|파라미터|인자|필드)N{0,10}(로|으로|에)N{0,10}(전달|넣|포함|설정|보내)`,
		`(передай|передайте|передать|включи|включите|включить|вставь|вставьте|вставить|помести|поместите|добавь|добавьте|отправь|отправьте|приложи)N{0,50}(содержимое|содержание|данные|текст|значение|результат|ключ|токен|секрет|файл|историю|сообщени|переписку|разговор|тело)N{0,40}(как|в|через)\s+(параметр|аргумент|поле)|(все|каждая) (команды|команда)N{0,10}(должны|должна) (начинаться|включать|содержать)`,
		`(مرر|أرسل|ارسل|ضع|أدرج|ادرج|أضف|اضف|ضمن|انسخ)N{0,50}(محتوى|المحتوى|بيانات|البيانات|النص|نص|القيمة|النتيجة|المفتاح|الرمز|السر|الملف|سجل|السجل|الرسائل|المحادثة)N{0,40}(ك|في|كـ|ضمن|عبر)\s*(معامل|المعامل|معلمة|المعلمة|وسيط|الوسيط|حقل|الحقل)`,
	},
}

// sensitiveTargets are the files and secrets whose reading is the payload
// of published poisonings: SSH, cloud and agent configuration, shell
// history, key material.
const sensitiveTargets = `(~|\$home|%userprofile%|/home/[a-z0-9_-]+|/root|/users/[a-z0-9_-]+)?/?\.(ssh|aws|gnupg|kube|docker|azure|config/gcloud|cursor|codeium|continue)\b|(\b|_)id_(rsa|dsa|ecdsa|ed25519)\b|\bmcp\.json\b|\bclaude_desktop_config\.json\b|\b(\.?npmrc|\.?netrc|\.?pypirc|\.git-credentials|\.bash_history|\.zsh_history)\b|/etc/(passwd|shadow|sudoers)\b|\bauthorized_keys\b|\bwallet\.dat\b|(^|[\s"'\x60(/~])\.env(\.[a-z]+)?\b|\b(credentials\.json|keychain|known_hosts)\b|\bprivate[ _-]?keys?\b|\b(seed|mnemonic|recovery) phrase\b|\bssh keys?\b|\b(clave privada|claves privadas|frase semilla|frase de recuperacion|cle privee|cles privees|phrase de recuperation|privater schlussel|privaten schlussel|private schlussel|wiederherstellungsphrase|chave privada|chaves privadas|frase semente|frase de recuperacao)\b`

// sensitiveGate holds a literal of each sensitive target: the Latin
// sensitive_file patterns, which open on common verbs, are tried only on
// text that holds one.
var sensitiveGate = []string{".ssh", "id_", "mcp.json", "claude_desktop", "npmrc", "netrc", "pypirc", "git-credentials",
	"_history", "/etc/", "authorized_keys", "wallet.dat", ".env", "credentials.json", "keychain", "known_hosts", "private",
	"phrase", "ssh key", ".aws", ".gnupg", ".kube", ".docker", ".azure", "gcloud", ".cursor", ".codeium", ".continue",
	"clave", "cle", "schlussel", "chave", "frase"}

// window is what W{m,n} (Latin) and N{m,n} (native) stand for: characters
// that do not end a sentence; a period inside a name ("mcp.json") does not.
var (
	latinWindow  = `(?:[^.!?;]|[.!?][^ ])`
	nativeWindow = `(?:[^.!?;。！？؟]|[.!?][^ ])`
	windowRef    = lazyregexp.New(`\s?[WN](\{\d+,\d+\})`)
)

// compiled is one alternative of one rule's patterns. A Latin pattern
// runs on a sentence only when one of its anchors (the literal its match
// must begin with, at the start of a word) begins a word of the sentence;
// a native one only when the text has letters of its scripts. Matching
// stays linear and cheap on text that holds no directive.
type compiled struct {
	rule     string
	re       *lazyRegexp
	anchored *lazyRegexp // re, matched only at the start of its input
	anchors  []string    // Latin: word prefixes; none: the pattern always runs
	scripts  uint8       // native: the scripts its literals are written in
	gate     []string    // markers: literals one of which the text must hold
}

// lazyRegexp is a pattern compiled on its first use. Most of the
// hundreds of directive patterns never run in a session (each waits for
// its anchor or script), and compiling them all when mcpguard starts took
// most of its start time and idle memory. Its syntax is checked when the
// table is built (compile parses every pattern), and a test compiles all.
type lazyRegexp struct {
	expr string
	// window, when set, replaces windowMark in expr before compiling.
	window string
	once   sync.Once
	re     *regexp.Regexp
}

func lazy(expr string) *lazyRegexp { return &lazyRegexp{expr: expr} }

func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() {
		expr := l.expr
		if l.window != "" {
			expr = strings.ReplaceAll(expr, windowMark, "(?:"+l.window+")")
		}
		l.re = regexp.MustCompile(expr)
	})
	return l.re
}

// windowMark stands for a window while a pattern is split into its
// alternatives and printed back: printing the window's class [^.!?;]
// folds the case of every rune it holds, which took a second for the
// table. It is a noncharacter, which no pattern holds, as the parser
// prints it.
var windowMark = func() string {
	re, err := syntax.Parse(`\x{FFFFF}`, syntax.Perl)
	if err != nil {
		panic(err)
	}
	return re.String()
}()

func compile(set map[string][]string, window, flags string, native bool) []compiled {
	var out []compiled
	for _, rule := range Rules() {
		for _, p := range set[rule] {
			expr := windowRef().ReplaceAllString(p, `\x{FFFFF}$1`)
			if native {
				expr = strings.ToLower(expr) // the native reading is lower case
			}
			tree, err := syntax.Parse(flags+expr, syntax.Perl)
			if err != nil {
				panic(rule + ": " + err.Error())
			}
			alts := []*syntax.Regexp{tree}
			if tree.Op == syntax.OpAlternate {
				alts = tree.Sub
			}
			for _, alt := range alts {
				text := alt.String()
				c := compiled{rule: rule, re: &lazyRegexp{expr: text, window: window}}
				if rule == RuleSensitiveFile && !native {
					c.gate = sensitiveGate
				}
				if native {
					c.scripts = treeScripts(alt)
					c.anchors, _ = anchorsOf(alt, true)
				} else if as, ok := anchorsOf(alt, false); ok {
					c.anchors = as
					c.anchored = &lazyRegexp{expr: `^(?:` + text + `)`, window: window}
				}
				out = append(out, c)
			}
		}
	}
	return out
}

// anchorsOf returns the literals a match of re must begin with, when
// that beginning is the start of a word (re opens with \b).
func anchorsOf(re *syntax.Regexp, bounded bool) ([]string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if !bounded || re.Flags&syntax.FoldCase != 0 {
			return nil, false
		}
		return []string{string(re.Rune)}, true
	case syntax.OpCapture:
		return anchorsOf(re.Sub[0], bounded)
	case syntax.OpAlternate:
		var all []string
		for _, sub := range re.Sub {
			as, ok := anchorsOf(sub, bounded)
			if !ok {
				return nil, false
			}
			all = append(all, as...)
		}
		return all, true
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			switch sub.Op {
			case syntax.OpWordBoundary:
				bounded = true
				continue
			case syntax.OpBeginLine, syntax.OpBeginText:
				continue
			}
			return anchorsOf(sub, bounded)
		}
	}
	return nil, false
}

// Scripts native patterns are written in.
const (
	scriptCJK uint8 = 1 << iota // Han, kana
	scriptHangul
	scriptCyrillic
	scriptArabic
)

func scriptOf(r rune) uint8 {
	switch {
	case r < 0x400:
		return 0
	case unicode.Is(unicode.Cyrillic, r):
		return scriptCyrillic
	case unicode.Is(unicode.Arabic, r):
		return scriptArabic
	case unicode.Is(unicode.Hangul, r):
		return scriptHangul
	case unicode.Is(unicode.Han, r), unicode.Is(unicode.Hiragana, r), unicode.Is(unicode.Katakana, r):
		return scriptCJK
	}
	return 0
}

// treeScripts is scriptsOf of a parsed pattern's literals and class
// bounds, the letters its text holds, without printing it (a negated
// class, [^.!?], holds none: it is stored as its complement).
func treeScripts(re *syntax.Regexp) uint8 {
	var set uint8
	negated := re.Op == syntax.OpCharClass && len(re.Rune) > 0 && re.Rune[len(re.Rune)-1] == unicode.MaxRune
	if re.Op == syntax.OpLiteral || re.Op == syntax.OpCharClass && !negated {
		for _, r := range re.Rune {
			set |= scriptOf(r)
		}
	}
	for _, sub := range re.Sub {
		set |= treeScripts(sub)
	}
	return set
}

func scriptsOf(s string) uint8 {
	var set uint8
	for _, r := range s {
		set |= scriptOf(r)
	}
	return set
}

// directiveSet is the directive patterns, split and indexed.
type directiveSet struct {
	latin, native []compiled
	// latinIndex maps each anchor to the Latin patterns it opens;
	// latinAlways are the ones without anchors.
	latinIndex  map[string][]int
	latinAlways []int
}

// directives builds the directive set on the first lint: parsing the
// patterns is most of the program's start-up work otherwise, before the
// first initialize is answered.
var directives = sync.OnceValue(func() *directiveSet {
	d := &directiveSet{latin: compile(latin, latinWindow, "", false), native: compile(native, nativeWindow, "", true)}
	d.latinIndex, d.latinAlways = index(d.latin)
	return d
})

// maxAnchor bounds the bytes of a word an anchor is looked up by.
const maxAnchor = 24

func index(ps []compiled) (map[string][]int, []int) {
	m := map[string][]int{}
	var always []int
	for i, p := range ps {
		if len(p.anchors) == 0 {
			always = append(always, i)
			continue
		}
		for _, a := range p.anchors {
			w := 0
			for w < len(a) && w < maxAnchor && wordByte(a[w]) {
				w++
			}
			if w == 0 {
				always = append(always, i)
				break
			}
			m[a[:w]] = append(m[a[:w]], i)
		}
	}
	return m, always
}
