import { fileURLToPath } from 'node:url'
import { buildWeb } from '../src/web-build/build-web.ts'

// Runs before `npm start` (prestart): the portal, the console and the widget are built from src/web into dist/web.
const result = await buildWeb()
process.stdout.write(`built portal, console and widget into ${fileURLToPath(result.outDir)} (widget.js ${result.widgetBytes} bytes, ${result.widgetGzipBytes} gzipped)\n`)
