#!/usr/bin/env node
// Stable bin target that exists before the build, so npm can link it at install time.
import "../dist/cli/main.js";
