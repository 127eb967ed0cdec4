// A strict reader of the Prometheus text exposition format (version 0.0.4), for the tests:
// every line must be a `# HELP`, a `# TYPE` or a sample `name{label="value",…} number`, each
// sample must belong to a family declared by `# TYPE` before it (histogram samples as
// `_bucket`, `_sum`, `_count`), and label values must be properly escaped. (The parser
// package we tried first dropped histogram labels, so it could not check ours.)

export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

export interface Family {
  name: string
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped'
  help: string
  samples: Sample[]
}

const metricName = '[a-zA-Z_:][a-zA-Z0-9_:]*'
const sampleLine = new RegExp(`^(${metricName})(?:\\{(.*)\\})? (\\S+)(?: (-?\\d+))?$`)
const labelPair = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\["\\n])*)"(,|$)/

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>()
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  for (const [i, line] of lines.entries()) {
    const where = `line ${i + 1}: ${JSON.stringify(line)}`
    if (line.startsWith('# HELP ')) {
      const [, name, help = ''] = /^# HELP (\S+) ?(.*)$/.exec(line) ?? []
      if (!name || !new RegExp(`^${metricName}$`).test(name)) throw new Error(`bad HELP, ${where}`)
      family(families, name).help = help
    } else if (line.startsWith('# TYPE ')) {
      const [, name, type] = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line) ?? []
      if (!name || !type) throw new Error(`bad TYPE, ${where}`)
      family(families, name).type = type as Family['type']
    } else if (line.startsWith('#') || line === '') {
      continue
    } else {
      addSample(families, line, where)
    }
  }
  return families
}

/** A sample line, added to the family it belongs to. */
function addSample(families: Map<string, Family>, line: string, where: string) {
  const match = sampleLine.exec(line)
  if (!match) throw new Error(`bad sample, ${where}`)
  const [, name, labelText = '', valueText] = match
  // NaN in any case, as Prometheus reads it (Go's ParseFloat): prom-client writes `Nan`
  // for a gauge with no sample yet (the event loop's lag right after a start).
  const nan = /^nan$/i.test(valueText ?? '')
  const value = valueText === '+Inf' ? Infinity : valueText === '-Inf' ? -Infinity : nan ? NaN
    : Number(valueText)
  if (Number.isNaN(value) && !nan) throw new Error(`bad value, ${where}`)
  const owner = ownerOf(families, name!)
  if (!owner) throw new Error(`sample of an undeclared family, ${where}`)
  owner.samples.push({ name: name!, labels: parseLabels(labelText, where), value })
}

function family(families: Map<string, Family>, name: string): Family {
  let f = families.get(name)
  if (!f) families.set(name, (f = { name, type: 'untyped', help: '', samples: [] }))
  return f
}

function ownerOf(families: Map<string, Family>, name: string): Family | undefined {
  const exact = families.get(name)
  if (exact) return exact
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!name.endsWith(suffix)) continue
    const f = families.get(name.slice(0, -suffix.length))
    if (f && (f.type === 'histogram' || f.type === 'summary')) return f
  }
  return undefined
}

function parseLabels(text: string, where: string): Record<string, string> {
  const labels: Record<string, string> = {}
  let rest = text
  while (rest.length > 0) {
    const match = labelPair.exec(rest)
    if (!match) throw new Error(`bad labels, ${where}`)
    labels[match[1]!] = match[2]!.replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1')
    rest = rest.slice(match[0].length)
  }
  return labels
}
