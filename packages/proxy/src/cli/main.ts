#!/usr/bin/env node
// Placeholder entry point; replaced by the proxy issue.
process.stdout.write('svc-proxy 0.1.0\n');
