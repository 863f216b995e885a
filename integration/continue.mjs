// Reads the MCP servers of Continue's config directories with Continue's
// own parser (@continuedev/config-yaml) and prints them as JSON, one
// object per server: {file, name, command, args} or {file, name, url}.
//
// Usage: node continue.mjs '["DIR", ...]'   (each DIR a .continue directory)
//
// config.yaml goes through parseConfigYaml and each mcpServers/*.yaml
// through parseBlock, as Continue loads them. The mcpServers/*.json files
// are read as Continue's loadJsonMcpConfigs does (core/context/mcp/json):
// comment-json's parser, then the first of its three shapes that fits
// (Claude Code-like with projects, Claude Desktop-like, one server named
// after its file), converted with convertJsonMcpConfigToYamlMcpConfig.
// Any file that does not parse is an error: the script exits 1.
import fs from "node:fs";
import path from "node:path";
import {
  claudeCodeLikeConfigFileSchema,
  claudeDesktopLikeConfigFileSchema,
  convertJsonMcpConfigToYamlMcpConfig,
  mcpServersJsonSchema,
  parseBlock,
  parseConfigYaml,
} from "@continuedev/config-yaml";
import * as JSONC from "comment-json";

const servers = [];

function add(file, list) {
  for (const s of list ?? []) {
    servers.push(s.command !== undefined
      ? { file, name: s.name, command: s.command, args: s.args ?? [] }
      : { file, name: s.name, url: s.url });
  }
}

function jsonEntries(file, text) {
  const json = JSONC.parse(text);
  const code = claudeCodeLikeConfigFileSchema.safeParse(json);
  if (code.success) {
    const all = Object.entries(code.data.mcpServers ?? {});
    for (const p of Object.values(code.data.projects)) {
      all.push(...Object.entries(p.mcpServers ?? {}));
    }
    return all;
  }
  const desktop = claudeDesktopLikeConfigFileSchema.safeParse(json);
  if (desktop.success) {
    return Object.entries(desktop.data.mcpServers);
  }
  const single = mcpServersJsonSchema.safeParse(json);
  if (single.success) {
    return [[path.basename(file).replace(".json", ""), single.data]];
  }
  throw new Error(`${file} doesn't match a supported MCP JSON configuration format`);
}

for (const dir of JSON.parse(process.argv[2])) {
  const config = path.join(dir, "config.yaml");
  if (fs.existsSync(config)) {
    add(config, parseConfigYaml(fs.readFileSync(config, "utf8")).mcpServers);
  }
  const mcp = path.join(dir, "mcpServers");
  for (const name of fs.existsSync(mcp) ? fs.readdirSync(mcp).sort() : []) {
    const file = path.join(mcp, name);
    const text = fs.readFileSync(file, "utf8");
    if (name.endsWith(".yaml")) {
      add(file, parseBlock(text).mcpServers);
    } else if (name.endsWith(".json")) {
      add(file, jsonEntries(file, text).map(([n, c]) => convertJsonMcpConfigToYamlMcpConfig(n, c).yamlConfig));
    }
  }
}
process.stdout.write(JSON.stringify(servers));
