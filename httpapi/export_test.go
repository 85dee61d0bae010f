package httpapi

import "github.com/gin-gonic/gin"

type ginContext = gin.Context
