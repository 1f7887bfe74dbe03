# batch-scheduler image: build with  docker build -t batch-scheduler:0.1.0 .
# (the tag is the version in pyproject.toml; manifests/07-deployment.yaml uses it).
#
# Stage 1 builds the project's wheel and installs it with its runtime dependencies into a
# virtual environment; stage 2 is a fresh slim Python with only that environment, no build
# tools, no pip, no caches, running as a numeric non-root user.

# Pinned by digest, so that two builds of one commit start from the same bytes. The digest
# was not pulled here (no registry access where this was written): it is the one public
# Dockerfiles pin for this tag. Check or move it with
#   docker buildx imagetools inspect python:3.11-slim-bookworm
ARG PYTHON_IMAGE=python:3.11-slim-bookworm@sha256:a36c24f9cbdf4fd0f52d67f0823eeac19c2028c637cecc392d97f980d4fec56b

FROM ${PYTHON_IMAGE} AS builder
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY pyproject.toml README.md requirements.lock ./
COPY scheduler ./scheduler
RUN python -m pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .
# Every runtime dependency from the lock, each file checked against its hash (make lock);
# then the project's own wheel without resolving anything again.
RUN python -m venv /opt/batch-scheduler \
 && /opt/batch-scheduler/bin/python -m pip install --no-cache-dir --require-hashes --no-deps \
      -r requirements.lock \
 && /opt/batch-scheduler/bin/python -m pip install --no-cache-dir --no-deps \
      /wheels/batch_scheduler-*.whl \
 && /opt/batch-scheduler/bin/python -m pip check \
 && /opt/batch-scheduler/bin/python -m pip uninstall --yes pip setuptools wheel

FROM ${PYTHON_IMAGE} AS runtime
# The base image's own pip/setuptools/wheel are build tools: not needed at run time.
RUN python -m pip uninstall --yes pip setuptools wheel \
 && rm -rf /root/.cache
COPY --from=builder /opt/batch-scheduler /opt/batch-scheduler
ENV PATH=/opt/batch-scheduler/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
# 65532: the conventional "nonroot" UID/GID; the Deployment's securityContext uses it too.
USER 65532:65532
# /metrics, /healthz, /readyz (run --metrics-addr=0.0.0.0:10259 in manifests/07-deployment.yaml)
EXPOSE 10259
ENTRYPOINT ["batch-scheduler"]
CMD ["run"]
