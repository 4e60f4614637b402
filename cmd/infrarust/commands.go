package main

import "github.com/spf13/cobra"

// commands lists every top-level command; one file per command group.
func commands(g *globalFlags) []*cobra.Command {
	return []*cobra.Command{
		newServeCmd(g),
		newStatusCmd(g),
		newConfigCmd(g),
		newBackendsCmd(g),
		newBansCmd(g),
		newServersCmd(g),
		newPlayersCmd(g),
		newFleetCmd(g),
		newPermsCmd(g),
		newReloadCmd(g),
		newLogsCmd(g),
		newAuthCmd(g),
		newVerifyCmd(g),
		newTopCmd(g),
		newHealthCmd(g),
		newGenDocsCmd(g),
		newVersionCmd(g),
	}
}
