#!/usr/bin/env node
// Placeholder entry point; replaced by the CLI issue.
process.stdout.write('svc 0.1.0\n');
