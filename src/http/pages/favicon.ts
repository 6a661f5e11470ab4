// The site's icon, asked for by every browser at /favicon.ico whatever page it shows (the dashboard, the signing and
// claim pages, /docs): a green disc with a white bolt, 32×32, one PNG inside an ICO (229 bytes). Without it each page
// view logged a failed request in the browser's console (a JSON 404).
export const FAVICON_ICO = Buffer.from(
  'AAABAAEAICAAAAEAIADPAAAAFgAAAIlQTkcNChoKAAAADUlIRFIAAAAgAAAAIAgGAAAAc3p69AAAAJZJREFUeNrVl8ENwDAIA7NHR+lwHb199ZWiYrBJQMr7TkEheIxOdVzn7TlLoBIZBPQWTSICtwRgCTYckkB7jAj8SmTgXgFTogpuSrQS+KqUQDV8kmgjECmaABsuF6C2QAF3CyiuPvUKmC+CLlAyB1jw1DTc7jOi7IqV8PROIIFHpqJsTfcIyDPCUjgrFZWno21yYqvE/QDcRmF72qG94gAAAABJRU5ErkJggg==',
  'base64',
);
