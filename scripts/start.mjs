// `npm start`: install dependencies if needed, then run the service (TypeScript via tsx).
import { ensureDependencies } from './ensure-deps.mjs'

ensureDependencies()
const { register } = await import('tsx/esm/api')
register()
await import('../src/main.ts')
