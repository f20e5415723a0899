#!/usr/bin/env node
// The `omnigate` command: loads the TypeScript sources through tsx (a runtime dependency), then dispatches.
import { register } from 'tsx/esm/api';

register();
await import('../server/cli/omnigate.ts');
