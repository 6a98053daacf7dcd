# netloadgen: loadgend (the load generator) and sutproxy (a KServe v2 server
# with simulated models) in one minimal image. The build stage runs the same
# `make build` as a local build, so the two cannot drift.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN make build VERSION=$VERSION

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /src/bin/loadgend /loadgend
COPY --from=build /src/bin/sutproxy /sutproxy
USER nonroot:nonroot
EXPOSE 8080
ENTRYPOINT ["/loadgend"]
