#!/usr/bin/env node
// The CLI runs the TypeScript sources through tsx, the same way `npm start` does.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/index.ts');
