module github.com/mcpguard/mcpguard/rules/secrets/internal/gitleaksgen

go 1.26.8

require github.com/pelletier/go-toml/v2 v2.2.3
