/** Seed the model registry into Mongo from data/catalogue.json. Idempotent; run before gateway and worker. */
import { loadConfig } from '../infra/config';
import { connectMongo } from '../infra/mongo';
import { readCatalogueFile, seedCatalogue } from '../services/catalogue-store';

const config = loadConfig({ ADMIN_TOKEN: 'x'.repeat(16), KEY_ENCRYPTION_KEY: '0'.repeat(64), ...process.env });
const db = await connectMongo(config.MONGO_URL);
const count = await seedCatalogue(db, readCatalogueFile(config.CATALOGUE_FILE));
console.log(JSON.stringify({ msg: 'catalogue seeded', models: count }));
await db.conn.close();
