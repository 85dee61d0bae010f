package httpapi

import (
	_ "embed"
	"net/http"

	"github.com/gin-gonic/gin"
)

// openapiYAML is the OpenAPI 3.1 description of exactly this API; openapi_test.go checks the
// router against it.
//
//go:embed openapi.yaml
var openapiYAML []byte

// OpenAPI returns the API description.
func OpenAPI() []byte { return openapiYAML }

func (h *Handler) openapi(c *gin.Context) {
	c.Data(http.StatusOK, "application/yaml", openapiYAML)
}
