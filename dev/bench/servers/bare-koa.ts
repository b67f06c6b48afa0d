/** Baseline: a bare Koa route returning a balance-shaped JSON body, no middleware. */
import Koa from 'koa';

const app = new Koa();
app.use((ctx) => {
  ctx.body = { object: 'key.balance', remaining_usd: '40.44', used_usd: '0.00', total_usd: '40.44', expires_at: null };
});
app.listen(Number(process.env.PORT), '127.0.0.1');
