# PostgreSQL 15 under Patroni, for compose.ha.yaml: the official PostgreSQL image (Debian
# bookworm) with Debian's patroni package. Every node runs the same image; compose.ha.yaml
# gives each its name and addresses (PATRONI_* variables) over deploy/ha/patroni.yml.
FROM postgres:15-bookworm
RUN apt-get update \
  && apt-get install -y --no-install-recommends patroni \
  && rm -rf /var/lib/apt/lists/*
COPY patroni.yml /etc/patroni/patroni.yml
COPY post-bootstrap.sh /etc/patroni/post-bootstrap.sh
USER postgres
CMD ["patroni", "/etc/patroni/patroni.yml"]
