# syntax=docker/dockerfile:1
# The salon binary: a static build, run as a non-root user on a read-only
# filesystem (see compose.yaml and docs/DEPLOY.md).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/salon ./cmd/salon

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/salon /salon
USER nonroot:nonroot
ENV SALON_HTTP_ADDR=:8080
EXPOSE 8080 9090
ENTRYPOINT ["/salon"]
CMD ["serve"]
