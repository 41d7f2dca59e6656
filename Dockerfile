# The connector binary as an Airbyte source image: a drop-in for the CDK's
# source-declarative-manifest. The platform runs it with the protocol's arguments
# (spec | check --config … | discover --config … | read --config … --catalog … [--state …]),
# the definition in the config's __injected_declarative_manifest.
#
#   docker build -t connector-airbyte:dev --build-arg VERSION=$(git describe --tags --always) .
#   docker run --rm -v "$PWD:/data" connector-airbyte:dev spec --manifest-path /data/definitions/no-auth.yaml

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# Static (no cgo), time zones built in (the image has no /usr/share/zoneinfo), and an
# empty /tmp (mode 1777, as a distribution's) for whatever user the image runs as.
RUN CGO_ENABLED=0 go build -trimpath -tags timetzdata \
      -ldflags "-s -w -X connector/cmd.version=${VERSION}" -o /out/connector . \
 && mkdir -p /out/rootfs/tmp && chmod 1777 /out/rootfs/tmp

FROM scratch
ARG VERSION=dev
# HTTPS to the APIs needs the CA roots; nothing else from a distribution is used.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
# /tmp comes inside a copied folder: COPY keeps the modes of what a folder holds, but buildah
# (podman build) makes the destination folder itself root 0755 whatever --chmod, --chown or
# the source say, and user 1000 could not write there.
COPY --from=build /out/rootfs/ /
COPY --from=build /out/connector /connector
# The platform starts connectors through AIRBYTE_ENTRYPOINT and reads these labels.
ENV AIRBYTE_ENTRYPOINT="/connector airbyte" TMPDIR=/tmp
LABEL io.airbyte.name="connector/source-declarative-manifest" \
      io.airbyte.version="${VERSION}" \
      org.opencontainers.image.title="connector" \
      org.opencontainers.image.description="Airbyte declarative manifest source, in Go"
USER 1000:1000
ENTRYPOINT ["/connector", "airbyte"]
