/** Where the browser code lives and where its build goes; read by the server without loading the bundler. */
export const WEB_SOURCE = new URL('../web/', import.meta.url)
export const WEB_OUT = new URL('../../dist/web/', import.meta.url)
