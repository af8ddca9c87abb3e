#!/usr/bin/env node
// The `dispatch-mcp` command. tsx is registered from here rather than with `node --import tsx`, because `--import`
// resolves from the caller's working directory, where tsx may not be installed.
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
