import { writeFileSync } from 'node:fs'
import { generateOpenApiDocument } from './openapi-document.ts'

// The committed openapi.json is the contract reviewers diff; a test fails when it drifts from the code.
writeFileSync(new URL('../openapi.json', import.meta.url), await generateOpenApiDocument())
process.stdout.write('wrote openapi.json\n')
