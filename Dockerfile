# syntax=docker/dockerfile:1
#
# One image for every toolgate process. The seven stage services, the
# operator CLI (toolgate) and the example executor are built in one pass and
# copied side by side into /usr/local/bin; the container command picks which
# one runs (docker-compose.yml and deploy/ set it per service):
#
#   docker run toolgate:latest /usr/local/bin/parse
#
# Why one image rather than nine: the binaries share almost all of their code
# (internal/, pkg/), so one build compiles it once, one image is scanned and
# signed once, every Deployment rolls to the same digest (no stage can run a
# different version of the envelope than its neighbours), and the shared
# layer is pulled once per node. The binaries are static and small; carrying
# all of them costs a few megabytes.
#
# Build:   docker build -t toolgate:latest .
# Run one: docker run --rm -e TOOLGATE_NATS_URL=nats://host:4222 toolgate:latest /usr/local/bin/accumulate

ARG GO_VERSION=1.27

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
WORKDIR /src

# Modules first, so a code change does not download them again.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download

COPY . .

ARG TARGETOS
ARG TARGETARCH
# Static binaries: no libc in the runtime image. Each listed package must
# exist: a missing stage fails the build instead of shipping an image
# without it.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    set -eux; \
    export CGO_ENABLED=0 GOOS="${TARGETOS:-linux}" GOARCH="${TARGETARCH:-amd64}"; \
    mkdir -p /out; \
    for b in accumulate parse validate business policy repair execute toolgate; do \
      go build -trimpath -ldflags "-s -w" -o "/out/$b" "./services/$b"; \
    done; \
    go build -trimpath -ldflags "-s -w" -o /out/example-executor ./examples/executor; \
    mkdir -p /home-toolgate/.toolgate

# distroless static: CA certificates, tzdata and /etc/passwd, no shell, no
# package manager. The :nonroot tag runs as uid/gid 65532.
FROM gcr.io/distroless/static-debian12:nonroot

LABEL org.opencontainers.image.title="toolgate" \
      org.opencontainers.image.description="Gates between LLM tool calls and real tools: accumulate, parse, validate, business, policy, repair, execute" \
      org.opencontainers.image.source="https://github.com/toolgate/toolgate"

COPY --from=build /out/ /usr/local/bin/
# toolgate up's data and secrets directory, owned by the nonroot user, so a
# volume mounted there starts with that owner (the image has no shell to
# make it).
COPY --from=build --chown=65532:65532 /home-toolgate/.toolgate /home/nonroot/.toolgate

USER 65532:65532
# Writable for the nonroot user: `toolgate up` keeps its embedded JetStream
# store under the working directory.
WORKDIR /home/nonroot

# /healthz and /readyz of every stage (TOOLGATE_HTTP_ADDR; the stage
# Deployments set :8080), and the embedded NATS of `toolgate up`.
EXPOSE 8080 4222

# Without a command the image runs the all-in-one process (every stage over
# an embedded NATS server) listening on every interface of the container,
# as a published port needs: NATS on 4222 and /readyz, /metrics on 8080.
# It stays authenticated: off loopback, a connection without a password is
# refused (--insecure is refused there too); the passwords and keys are made
# in /home/nonroot/.toolgate/secrets (mount a volume there to keep them, and
# read nats-admin.password from it for the CLI). Services override this
# with their own binary.
CMD ["/usr/local/bin/toolgate", "up", "--listen", "0.0.0.0:4222", "--http", "0.0.0.0:8080"]
