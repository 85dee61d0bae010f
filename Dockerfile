# syntax=docker/dockerfile:1
# Multi-stage build: a static bankd binary in a minimal, non-root image.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/bankd ./cmd/bankd \
 && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/embedmongo ./cmd/embedmongo

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/bankd /out/embedmongo /usr/local/bin/
USER nonroot:nonroot
EXPOSE 8080
# With MONGODB_URI unset, bankd runs the embedded engine on /data (mount a volume there).
ENV BANKD_ADDR=0.0.0.0:8080 BANKD_DATA_DIR=/data
VOLUME ["/data"]
HEALTHCHECK NONE
ENTRYPOINT ["/usr/local/bin/bankd"]
CMD ["serve"]
