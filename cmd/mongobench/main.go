// Command mongobench is a performance lab for MongoDB and the servers that
// speak its wire protocol. All logic lives in internal/cli.
package main

import (
	"os"

	"github.com/mongobench/mongobench/internal/cli"
)

func main() {
	os.Exit(cli.Main(cli.NewOSState()))
}
