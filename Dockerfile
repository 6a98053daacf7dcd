# netloadgen: loadgend (the load generator) and sutproxy (a KServe v2 server
# with simulated models) in one minimal image. The build stage runs the same
# `make build` as a local build, so the two cannot drift; deploy/'s
# TestDockerfile checks this file and runs that build stage's commands.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN make build VERSION=$VERSION
# The run history's directory, owned by the nonroot user: the final image
# has no shell to make it.
RUN mkdir -p /out/loadgend-data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /src/bin/loadgend /loadgend
COPY --from=build /src/bin/sutproxy /sutproxy
COPY --from=build --chown=65532:65532 /out/loadgend-data /var/lib/loadgend
# In a container loadgend must listen on all interfaces; it then refuses to
# start without LOADGEND_API_TOKEN (or LOADGEND_INSECURE=true).
ENV LOADGEND_LISTEN=0.0.0.0:8080 \
    LOADGEND_DATA_DIR=/var/lib/loadgend
# Numeric: the kubelet can only verify runAsNonRoot against a numeric user.
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/loadgend"]
