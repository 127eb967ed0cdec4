#!/usr/bin/env node
// The operator CLI (`npx bank …`, `npm run bank -- …`): TypeScript run through tsx.
import { register } from 'tsx/esm/api'

register()
await import('../src/cli/main.ts')
