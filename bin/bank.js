#!/usr/bin/env node
// The operator CLI (`npx bank …`, `npm run bank -- …`): TypeScript run through tsx.
import { register } from 'tsx/esm/api'

register()
const { runCli } = await import('../src/cli/main.ts')
process.exit(await runCli(process.argv.slice(2)))
