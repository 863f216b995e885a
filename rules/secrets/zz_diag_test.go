package secrets

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

func TestDiag(t *testing.T) {
	kws := strings.Fields(`atatt3 sharedaccesskey= github_pat_ xoxe.xoxb- glpat- fio-u- sq0atp- glrt- curl xoxe- airtable facebook xoxe.xoxp- gems.contribsys.com gloas- glagent- glimt- gldt- glft- hooks.slack.com tk-us- glsoat- glffct- :*: enterprise.contribsys.com fo1_ 4b1d eyjrijoi scauth_ sourcegraph authress_ xoxp- sgp_ :5432: glcbt- client-key-data pscale_pw_ pscale_oauth_ pscale_tkn_ tfp_ "auth nrii-`)
	for _, kw := range kws {
		text := strings.Repeat(kw, 4096/len(kw))
		var m []string
		for _, r := range allRules() {
			if !containsKW(r.keywords, kw) { continue }
			r.passesQuick("", 0, 0, nil)
			re := regexp.MustCompile(r.spec.regex)
			m = append(m, fmt.Sprintf("%s(q=%v,a=%v,match=%v)", r.spec.id, r.quick != nil, r.anchors || r.backAnchor, re.MatchString(text)))
		}
		fmt.Println(kw, m)
	}
}

func containsKW(kws []string, k string) bool {
	for _, x := range kws { if x == k { return true } }
	return false
}
