module github.com/a2c-smcp/smcp-go

go 1.25.5

require github.com/magefile/mage v1.17.2

require github.com/a2c-smcp/smcp-go/tools v0.1.0

require golang.org/x/mod v0.34.0
