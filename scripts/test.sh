#!/usr/bin/env bash
# The test command, on a fresh machine too; CI runs exactly this (.ci/run).
#
# It builds and tests three combinations in turn:
#   1. everything on Java 17 and Spring Boot 4.0.7 (the project's own versions);
#   2. the starter and its integration tests on Java 25, the Java most new Boot 4
#      applications run on;
#   3. the same modules on Spring Boot 4.1.2, which Spring AI 2.0 is built for, and
#      with the newest OpenAI Java SDK served here.
# LLMQUOTA_COMBINATIONS=java17 runs the first one only, for a quicker local loop.
#
# The dashboard's browser test drives Debian's chromium through chromium-driver, which
# Maven cannot bring: they are installed once (nothing happens when they are there). Redis
# comes from a Maven artifact; nothing else is needed.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  echo "Installing Debian's chromium and chromium-driver for the dashboard's browser test"
  $sudo apt-get install -y -qq chromium chromium-driver \
    || { $sudo apt-get update -qq && $sudo apt-get install -y -qq chromium chromium-driver; }
fi

# the starter, what it is built from, and the modules that test it with other libraries
modules=llm-quota-test,llm-quota-autoconfigure,llm-quota-starter,integration-tests
jdk25="${LLMQUOTA_JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}"
boot41=4.1.2
# OpenAI's Java SDK as users who build its client by hand take it, beside the 4.49.0
# Spring AI 2.0.1 brings (run 1 and 2): from some version between them it closes a
# stream on its [DONE], before the connection's end
openai_newest=4.105.0

echo "== 1/3: every module on Java 17 and Spring Boot 4.0.7"
mvn -B -ntp verify "$@"

if [ "${LLMQUOTA_COMBINATIONS:-all}" = "java17" ]; then
  echo "LLMQUOTA_COMBINATIONS=java17: Java 25 and Spring Boot $boot41 were not tested"
  exit 0
fi

if [ ! -x "$jdk25/bin/java" ]; then
  echo "No JDK 25 at $jdk25: set LLMQUOTA_JDK25 to one (or LLMQUOTA_COMBINATIONS=java17 to skip it)" >&2
  exit 1
fi
echo "== 2/3: $modules on Java 25 ($jdk25) and Spring Boot 4.0.7"
# what these runs leave out, and why: scripts/compatibility-excludes.txt
compat="-Dsurefire.excludesFile=$PWD/scripts/compatibility-excludes.txt"
JAVA_HOME="$jdk25" mvn -B -ntp verify -pl "$modules" -Djacoco.skip=true "$compat"

echo "== 3/3: $modules on Java 17, Spring Boot $boot41 and OpenAI's Java SDK $openai_newest"
# The parent's version is fixed in pom.xml, so a copy of the tree builds on the other one.
copy="$(mktemp -d)"
trap 'rm -rf "$copy"' EXIT
tar --exclude='./*/target' --exclude='./target' --exclude='./.git' -cf - . | tar -C "$copy" -xf -
sed -i "0,/<version>4\.0\.7<\/version>/s//<version>$boot41<\/version>/" "$copy/pom.xml"
grep -q "<version>$boot41</version>" "$copy/pom.xml"
# Netty 4.2.18.Final: Boot 4.1.2 manages 4.2.19.Final, which the Maven registry this project
# builds from does not serve; 4.2.18.Final, of the same line, it does
(cd "$copy" && mvn -B -ntp verify -pl "$modules" -Djacoco.skip=true -Dnetty.version=4.2.18.Final \
  -Dopenai-java.version="$openai_newest" "$compat")
