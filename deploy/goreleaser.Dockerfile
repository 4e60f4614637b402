# Release image: goreleaser's dockers_v2 builds it for each platform from the
# binaries it already built for the archives (COPY $TARGETPLATFORM/infrarust), so
# the image runs exactly the released binary. Same layout as deploy/Dockerfile
# (docs/containers.md); the small build stage only lays out files, because the
# runtime image has no shell.
FROM --platform=$BUILDPLATFORM alpine:3.22 AS layout
RUN apk add --no-cache ca-certificates
COPY deploy/docker/infrarust.toml /out/etc/infrarust/infrarust.toml
RUN set -eu; \
    mkdir -p /out/etc/ssl/certs /out/etc/infrarust/servers /out/data /out/tmp; \
    cp /etc/ssl/certs/ca-certificates.crt /out/etc/ssl/certs/; \
    echo 'infrarust:x:65532:65532:infrarust:/data:/sbin/nologin' > /out/etc/passwd; \
    echo 'infrarust:x:65532:' > /out/etc/group; \
    chown -R 65532:65532 /out/data; \
    chmod 1777 /out/tmp

FROM scratch
ARG TARGETPLATFORM
COPY --from=layout /out/ /
COPY $TARGETPLATFORM/infrarust /usr/local/bin/infrarust
ENV INFRARUST_CONFIG=/etc/infrarust/infrarust.toml
USER 65532:65532
WORKDIR /data
VOLUME ["/data"]
EXPOSE 25565 8080
HEALTHCHECK --interval=15s --timeout=5s --start-period=10s --retries=3 \
    CMD ["/usr/local/bin/infrarust", "health"]
ENTRYPOINT ["/usr/local/bin/infrarust"]
CMD ["serve"]
