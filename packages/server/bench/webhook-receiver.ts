// A webhook receiver for the delivery benchmark, in its own process: answers 200 to every POST and notes
// when each webhook-id arrived (a high-resolution time on the machine's clock, comparable across
// processes). GET /count answers how many arrived, GET /stats the count and the arrivals; DELETE /stats forgets them.
import http from 'node:http';

const port = Number(process.env.PORT);
let arrivals: Record<string, number> = {};
let count = 0;

const server = http.createServer((req, res) => {
  if (req.method === 'POST') {
    const at = performance.timeOrigin + performance.now();
    req.resume();
    req.on('end', () => {
      count++;
      const id = req.headers['webhook-id'];
      if (typeof id === 'string') arrivals[id] ??= at;
      res.writeHead(200).end();
    });
    return;
  }
  if (req.method === 'DELETE') {
    arrivals = {};
    count = 0;
    res.writeHead(204).end();
    return;
  }
  if (req.url === '/count') {
    res.writeHead(200, { 'content-type': 'text/plain' }).end(String(count));
    return;
  }
  if (req.url === '/stats') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ count, arrivals }));
    return;
  }
  res.writeHead(200).end('ok');
});
server.keepAliveTimeout = 60_000;
process.once('SIGTERM', () => server.close(() => process.exit(0)));
server.listen(port, '127.0.0.1');
