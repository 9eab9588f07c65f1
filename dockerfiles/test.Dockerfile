# Redis's own test suite (what `make test` runs: ./runtest) against the
# variant's compiled tree, owned by the verify package. Appended after the
# main recipe by dockerfiles.Render. The RUN never fails: runtest's output
# and exit status are exported from the test-report stage (an output of type
# local), so failed tests are reported, not lost. Like any layer it is
# cached: an unchanged variant with unchanged TEST_ARGS is not re-tested;
# TEST_NONCE forces a new run (retries).

# --------------------------------------------------------------------- test
# The build's tree, with the image's own redis-server put in it (the named
# context "server", verify.ServerContext: the binary read from the finished
# image), so the suite proves the binary the image ships, whatever
# rewrote it after make (BOLT, whose training is not repeatable); the
# report records the sha256 of the redis-server the suite ran.
FROM build AS test
USER root
ENV DEBIAN_FRONTEND=noninteractive
RUN set -eux; \
	apt-get update; \
	apt-get install -y --no-install-recommends tcl procps; \
	rm -rf /var/lib/apt/lists/*; \
	echo 'puts "tcl [info patchlevel]"' | tclsh
WORKDIR /src/redis
COPY --from=server --chmod=755 redis-server /src/redis/src/redis-server
RUN for f in redis-check-aof redis-check-rdb redis-sentinel; do \
		if [ -f "src/$f" ]; then cp src/redis-server "src/$f"; fi; \
	done
ARG TEST_ARGS="--clients 4 --timeout 600 --tags -slow --durable"
ARG TEST_NONCE=
RUN mkdir -p /report; \
	printf '%s\n' "$TEST_ARGS" > /report/args; \
	printf '%s\n' "$TEST_NONCE" > /report/nonce; \
	nproc > /report/nproc; \
	sha256sum src/redis-server | cut -d' ' -f1 > /report/server.sha256; \
	start=$(date +%s); \
	eval "./runtest $TEST_ARGS" > /report/runtest.log 2>&1; \
	echo $? > /report/exit-code; \
	echo $(( $(date +%s) - start )) > /report/seconds; \
	true

# -------------------------------------------------------------- test-report
FROM scratch AS test-report
COPY --from=test /report /

# ------------------------------------------------------------ test-official
# The official recipes keep their compiled tree in /usr/src/redis: the same
# suite against the official reference's own binaries (OFFICIAL_BUILD names
# the recipe's build stage: official-build or official-alpine-build).
FROM ${OFFICIAL_BUILD} AS test-official
USER root
ENV DEBIAN_FRONTEND=noninteractive
RUN set -eux; \
	apt-get update; \
	apt-get install -y --no-install-recommends tcl procps; \
	rm -rf /var/lib/apt/lists/*
WORKDIR /usr/src/redis
ARG TEST_ARGS="--clients 4 --timeout 600 --tags -slow --durable"
ARG TEST_NONCE=
RUN mkdir -p /report; \
	printf '%s\n' "$TEST_ARGS" > /report/args; \
	printf '%s\n' "$TEST_NONCE" > /report/nonce; \
	nproc > /report/nproc; \
	sha256sum src/redis-server | cut -d' ' -f1 > /report/server.sha256; \
	start=$(date +%s); \
	eval "./runtest $TEST_ARGS" > /report/runtest.log 2>&1; \
	echo $? > /report/exit-code; \
	echo $(( $(date +%s) - start )) > /report/seconds; \
	true

FROM scratch AS test-report-official
COPY --from=test-official /report /
