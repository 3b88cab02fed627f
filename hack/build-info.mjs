#!/usr/bin/env node
/**
 * Writes build-info.json in the current directory (the package root) from the image build's
 * GIT_COMMIT and BUILD_DATE arguments: `node hack/build-info.mjs COMMIT [BUILD_DATE]`.
 * src/lib/version.ts reads it for `kube-identity version` and kube_identity_build_info.
 * Plain JavaScript so the Dockerfile's build stage runs it with node alone.
 */
import { writeFileSync } from 'node:fs';

const [commit = '', buildDate = ''] = process.argv.slice(2);

// A typo in a build argument would otherwise ship in every image as a version nobody can trace.
if (!/^([0-9a-f]{7,64}|unknown)$/.test(commit)) {
  console.error(`build-info: commit must be a hex git commit or "unknown", not ${JSON.stringify(commit)}`);
  process.exit(2);
}
if (buildDate !== '' && !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(buildDate)) {
  console.error(`build-info: build date must be RFC 3339 (date -u +%Y-%m-%dT%H:%M:%SZ) or empty, not ${JSON.stringify(buildDate)}`);
  process.exit(2);
}

writeFileSync('build-info.json', JSON.stringify({ commit, buildDate }) + '\n');
