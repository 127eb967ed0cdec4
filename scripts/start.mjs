// `npm start`: install dependencies if needed, build dist/ when it is missing or stale
// (scripts/build.mjs, well under a second), then run the compiled service with the
// development helpers of dev/start.ts (a private NATS server when none answers).
import fs from 'node:fs'
import path from 'node:path'
import { ensureDependencies, root } from './ensure-deps.mjs'

ensureDependencies()
const { build, buildState } = await import('./build.mjs')
const entry = path.join(root, 'dist/dev/start.js')
const state = buildState(root)
if (state !== 'current' || !fs.existsSync(entry)) {
  const { ms } = await build()
  const was = state === 'current' ? 'a production build' : state
  process.stderr.write(`npm start: built dist/ (it was ${was}) in ${ms} ms\n`)
}
await import('../dist/dev/start.js')
