# The release image (built by goreleaser's dockers_v2 from the binaries it
# built; see .goreleaser.yaml): the fleet build (-tags fleet), static, on
# distroless, run as a user without privileges (nonroot, uid 65532, as deploy/kubernetes/Dockerfile
# builds it from source). Mount the evidence and give its path:
#   docker run --rm -v "$PWD:/evidence:ro" ghcr.io/netmortem/netmortem analyze /evidence
FROM gcr.io/distroless/static-debian12:nonroot
ARG TARGETPLATFORM
COPY $TARGETPLATFORM/netmortem /usr/bin/netmortem
USER 65532:65532
WORKDIR /evidence
ENTRYPOINT ["/usr/bin/netmortem"]
