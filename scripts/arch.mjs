// `npm run arch`: checks the architecture rules of .dependency-cruiser.mjs (what may import
// what under src/, no import cycles) with dependency-cruiser, and fails on any violation that
// .dependency-cruiser-known-violations.json does not list. `npm test` runs it beside the type
// check. The known list is dependency-cruiser's own baseline (`depcruise-baseline`, which
// `npm run arch:baseline` runs): what the code broke when the rules came in. The module work
// of issue 29 drove it to zero and issue 41 deleted the file: with none, every violation
// fails. The last line printed always says how many remain.
// Options: `--known` also lists the known violations; `--json` prints the result as JSON.
//
// Same as `npx depcruise src --config .dependency-cruiser.mjs --ignore-known`, with a
// shorter report: each new violation's rule, files and the rule's reason, and the counts.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
export const configFile = '.dependency-cruiser.mjs'
export const knownFile = '.dependency-cruiser-known-violations.json'

const key = (v) => `${v.rule.name} ${v.from} → ${v.to}`

/**
 * Cruises `paths` (relative to `baseDir`) under the rules of `config`. Violations listed in
 * `knownViolations` (entries of a baseline file) are known; the others are new. Returns the
 * new ones, the known counts per rule, and the known entries that no longer occur (fixed:
 * `npm run arch:baseline` drops them from the list).
 */
export async function checkArchitecture({
  root = projectRoot,
  baseDir = root,
  paths = ['src'],
  config = path.join(root, configFile),
  knownViolations = readKnown(path.join(root, knownFile)),
} = {}) {
  const started = performance.now()
  const [{ cruise }, { default: extractDepcruiseOptions }, { default: extractTSConfig }] =
      await Promise.all([
    import('dependency-cruiser'),
    import('dependency-cruiser/config-utl/extract-depcruise-options'),
    import('dependency-cruiser/config-utl/extract-ts-config'),
  ])
  const options = await extractDepcruiseOptions(config)
  const tsConfigFile = path.resolve(root, options.tsConfig?.fileName ?? 'tsconfig.json')
  const cruiseOptions = {
    ...options,
    baseDir,
    tsConfig: { fileName: tsConfigFile },
    ruleSet: { ...options.ruleSet, options: { ...options.ruleSet.options, knownViolations } },
  }
  const { output } = await cruise(paths, cruiseOptions, {},
    { tsConfig: extractTSConfig(tsConfigFile) })
  const { violations, totalCruised, totalDependenciesCruised } = output.summary
  const found = new Set(violations.map(key))
  const known = {}
  for (const v of violations.filter((v) => v.rule.severity === 'ignore')) known[v.rule.name] =
    (known[v.rule.name] ?? 0) + 1
  return {
    newViolations: violations.filter((v) => v.rule.severity === 'error'
      || v.rule.severity === 'warn'),
    knownViolations: violations.filter((v) => v.rule.severity === 'ignore'),
    known,
    fixed: knownViolations.filter((v) => !found.has(key(v))),
    comments: Object.fromEntries(options.ruleSet.forbidden.map(
      (rule) => [rule.name, rule.comment])),
    modules: totalCruised,
    dependencies: totalDependenciesCruised,
    ms: Math.round(performance.now() - started),
  }
}

function readKnown(file) {
  return fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : []
}

/**
 * One violation as a line: its rule and its files (a cycle's files in order, back to the first).
 */
export function describeViolation(v) {
  const files = v.cycle ? [v.from, ...v.cycle.map((step) => step.name)] : [v.from, v.to]
  return `${v.rule.name}: ${files.join(' → ')}`
}

/** The report: each new violation with its rule's reason, then one line of counts. */
export function formatReport(result, { listKnown = false } = {}) {
  const lines = []
  const total = Object.values(result.known).reduce((sum, n) => sum + n, 0)
  const byRule = Object.entries(result.known).map(([rule, n]) => `${rule} ${n}`).join(', ')
  if (result.newViolations.length > 0) {
    lines.push(`architecture: ${result.newViolations.length} new violation(s) of the rules ` +
      `in ${configFile}:`)
    for (const rule of new Set(result.newViolations.map((v) => v.rule.name))) {
      for (const v of result.newViolations.filter((v) => v.rule.name === rule)) lines.push(
        `  ${describeViolation(v)}`)
      if (result.comments[rule]) lines.push(`    (${result.comments[rule]})`)
    }
    lines.push(`  Change the imports. (\`npm run arch:baseline\` would list these as known: only ` +
      `for a reason the commit gives.)`)
  }
  if (listKnown) for (const v of result.knownViolations) lines.push(
    `  known: ${describeViolation(v)}`)
  if (result.fixed.length > 0) {
    lines.push(`architecture: ${result.fixed.length} known violation(s) no longer occur; \`npm ` +
      `run arch:baseline\` drops them from ${knownFile}:`)
    for (const v of result.fixed) lines.push(`  fixed: ${v.rule.name}: ${v.from} → ${v.to}`)
  }
  lines.push(
    `architecture: ${result.newViolations.length} new, ${total} known violations ` +
      `remain${byRule ? ` (${byRule})` : ''}; ` +
      `${result.modules} modules, ${result.dependencies} imports ` +
        `in ${(result.ms / 1000).toFixed(1)} s`,
  )
  return `${lines.join('\n')}\n`
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const result = await checkArchitecture()
  if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify(result, null, 1)}\n`)
  else process.stdout.write(formatReport(result, { listKnown: process.argv.includes('--known') }))
  process.exitCode = result.newViolations.length > 0 ? 1 : 0
}
