#!/bin/sh
# Run once by Patroni on the node that creates the cluster, with its connection URL: the
# bank's role and database (the bank creates its tables itself). Change the password.
set -eu
psql -v ON_ERROR_STOP=1 "$1" -c "create role bank login password 'bank'" -c "create database bank owner bank"
