import { writeFileSync } from 'node:fs'
import { API_TYPES_FILE, generateApiTypes, generateOpenApiDocument } from './openapi-document.ts'

// The committed openapi.json is the contract reviewers diff; a test fails when it drifts from the code.
const document = await generateOpenApiDocument()
writeFileSync(new URL('../openapi.json', import.meta.url), document)
// The browser apps' types come from the same document, so they cannot disagree with the routes.
writeFileSync(API_TYPES_FILE, await generateApiTypes(document))
process.stdout.write('wrote openapi.json and src/web/shared/api-types.ts\n')
