package main

import "github.com/weft-dev/weft/sdk/plugin"

func main() {
	plugin.Serve(&plugin.ServeConfig{Harness: harness{}})
}
