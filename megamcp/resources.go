package megamcp

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weft-dev/weft/core/module"
)

// addResourcesAndPrompts registers the group's module resources and prompts
// on its MCP server.
func (s *Server) addResourcesAndPrompts(srv *mcp.Server, g *Group) {}

func embeddedResource(c module.Content) (mcp.Content, error) {
	return nil, fmt.Errorf("unsupported content type %q", c.Type)
}
