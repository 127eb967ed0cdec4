#!/usr/bin/env node
// The operator CLI (`npx bank …`, `npm run bank -- …`): the compiled JavaScript of
// dist/cli/main.js (`npm run build`) when the build is current, else the TypeScript of src/
// through tsx, which costs about 2 CPU-seconds a run (a terminal is told so on stderr; a
// script reading stderr is not). A checkout without src/ (the image) runs dist/ as it is.
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'

const root = new URL('../', import.meta.url)
let state = 'current'
if (fs.existsSync(new URL('src/', root))) {
  const { buildState } = await import('../scripts/build.mjs')
  state = buildState(fileURLToPath(root))
}
let runCli
if (state === 'current') {
  ;({ runCli } = await import('../dist/cli/main.js'))
} else {
  if (process.stderr.isTTY) {
    const hint = `the build is ${state}: running the TypeScript through tsx (slower); npm run build`
    process.stderr.write(`bank: ${hint}\n`)
  }
  const { register } = await import('tsx/esm/api')
  register()
  ;({ runCli } = await import('../src/cli/main.ts'))
}
process.exit(await runCli(process.argv.slice(2)))
