import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { connectDatabase } from '../src/db/connect.ts'

/** The OpenAPI document exactly as the service serves it, built without touching any real data. */
export async function generateOpenApiDocument(): Promise<string> {
  const database = await connectDatabase({ dataDir: 'memory://' })
  try {
    const app = await buildApp({ database, config: loadConfig({ LOG_LEVEL: 'silent', SEED_DEMO_DATA: 'false' }) })
    await app.ready()
    const document = `${JSON.stringify(app.swagger(), null, 2)}\n`
    await app.close()
    return document
  } finally {
    await database.close()
  }
}
