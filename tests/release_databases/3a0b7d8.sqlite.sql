-- A checkout database made by the release at commit 3a0b7d8 (sqlite), with rows in it, for the upgrade
-- tests (tests/test_schema.py). Made by tests/release_databases/make_dumps.sh: that release's own
-- code (tests/release_databases/make_database.py, run in a worktree of commit 3a0b7d8 with its
-- package and test helpers) made the tables at its start-up and the rows through its pages,
-- webhook receiver and commands on its embedded sandbox; then sqlite3 .dump (3.40.1) wrote this file.
-- Sessions expire in 2099 (one UPDATE, so that the tests can open them). Ids: 3a0b7d8.sqlite.json.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE checkout_sessions (
	id VARCHAR(64) NOT NULL, 
	flow VARCHAR(16) NOT NULL, 
	jti VARCHAR(255), 
	csrf_token VARCHAR(64) NOT NULL, 
	claims JSON NOT NULL, 
	locked JSON NOT NULL, 
	data JSON NOT NULL, 
	step VARCHAR(32) NOT NULL, 
	order_id VARCHAR(64), 
	creating_since DATETIME, 
	creating_owner VARCHAR(64), 
	version INTEGER NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	expires_at DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (jti)
);
INSERT INTO checkout_sessions VALUES('LyaCOIzOapvvSpS7DZw2olKfitVxRjPpmOjXlXfgv2c','onramp',NULL,'mQDvl6eL3-kCyIBK-yVEfgXQNZvsG6_Ziga38wPIg7g','{}','[]','{"v": 2, "answers": {"countryIsoCode": "NG", "paymentChannel": "bank", "carrierCode": null, "network": "CELO", "asset": "USDT", "currency": "local", "amount": "5000", "address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "memo": "", "email": "ada@example.com"}, "fields": {}, "quote": {"id": "6b03cbb71506662cfd455399", "fetched_at": 1795410871.297621, "params": {"network": "CELO", "asset": "USDT", "currency": "local", "amount": "5000", "countryIsoCode": "NG", "paymentChannel": "bank", "carrierCode": null}, "offer": {"countryIsoCode": "NG", "currencyIsoCode": "NGN", "exchangeRate": 1480, "cryptoExchangeRate": 1480, "paymentChannel": "bank"}, "required_fields": {}, "cashout": {"localCurrencyAmount": 5000, "totalAmountUsd": 3.378378, "withdrawAmountUsd": 3.283918, "totalAmountCrypto": 3.378378, "withdrawAmountCrypto": 3.283918, "feePercent": 2.5, "feePercentService": 1.5, "feePercentPartner": 1, "feeAmountUsd": 0.08446, "feeAmountUsdService": 0.050676, "feeAmountUsdPartner": 0.033784, "feeAmountLocalCurrency": 125, "feeAmountLocalCurrencyService": 75, "feeAmountLocalCurrencyPartner": 50, "feeAmountCrypto": 0.08446, "feeAmountCryptoService": 0.050676, "feeAmountCryptoPartner": 0.033784, "gasAmountUsd": 0.01, "gasAmountLocalCurrency": 14.8}}, "progress": {"done": ["choose", "wallet"], "answered": ["choose", "wallet"], "reviewed": true}, "wallet": {"network": "CELO", "notice": null}, "reference": "chk_0343c7de36a3a0c338432a10", "pending": null, "order": {"id": "6b03cbb71506662cfd45539c", "resume_url": "http://shop.test/checkout/sandbox/orders/6b03cbb71506662cfd45539c", "transfer_type": "manual"}, "events": {"order_created": true, "statuses": ["deposit_awaiting"]}}','start','6b03cbb71506662cfd45539c',NULL,NULL,9,'2026-11-23 05:14:31.161314','2026-11-23 05:14:31.402190','2099-01-01 00:00:00');
INSERT INTO checkout_sessions VALUES('Ot6_QWAL4uWx3BvEYDuFKInOZcXj-CySvQ74RQPo5v4','onramp','eL0N-IbSiPeDzSY6H-y02f5N','gG6PQmoUQuX-xIVZJlV82e4O9Vvw9OjPeRuTl8Pc2wM','{"asset": "USDC", "countryIsoCode": "NG", "network": "CELO", "orderParams": "basket-42", "email": "ada@example.com"}','["network"]','{"v": 2, "fields": {}, "answers": {"countryIsoCode": "NG", "paymentChannel": "bank", "carrierCode": null, "asset": "USDT", "currency": "local", "amount": "5000"}, "quote": {"id": "6b03cbb71506662cfd45539d", "fetched_at": 1795410871.5675795, "params": {"network": "CELO", "asset": "USDT", "currency": "local", "amount": "5000", "countryIsoCode": "NG", "paymentChannel": "bank", "carrierCode": null}, "offer": {"countryIsoCode": "NG", "currencyIsoCode": "NGN", "exchangeRate": 1480, "cryptoExchangeRate": 1480, "paymentChannel": "bank"}, "required_fields": {}, "cashout": {"localCurrencyAmount": 5000, "totalAmountUsd": 3.378378, "withdrawAmountUsd": 3.283918, "totalAmountCrypto": 3.378378, "withdrawAmountCrypto": 3.283918, "feePercent": 2.5, "feePercentService": 1.5, "feePercentPartner": 1, "feeAmountUsd": 0.08446, "feeAmountUsdService": 0.050676, "feeAmountUsdPartner": 0.033784, "feeAmountLocalCurrency": 125, "feeAmountLocalCurrencyService": 75, "feeAmountLocalCurrencyPartner": 50, "feeAmountCrypto": 0.08446, "feeAmountCryptoService": 0.050676, "feeAmountCryptoPartner": 0.033784, "gasAmountUsd": 0.01, "gasAmountLocalCurrency": 14.8}}, "progress": {"done": ["choose"], "answered": ["choose"], "reviewed": false}}','start',NULL,NULL,NULL,2,'2026-11-23 05:14:31.560112','2026-11-23 05:14:31.568082','2099-01-01 00:00:00');
INSERT INTO checkout_sessions VALUES('ngYgmCVDN1XW1dyQkBsiNj2O0Mpu0K5bNqeoSAIWBlY','offramp',NULL,'SKXFmcqrqulS6VOTlUi-0IfIKRto5vuJhejtWBByZ-w','{}','[]','{"v": 2}','start',NULL,NULL,NULL,1,'2026-11-23 05:14:31.569892','2026-11-23 05:14:31.569892','2099-01-01 00:00:00');
CREATE TABLE checkout_webhook_events (
	id INTEGER NOT NULL, 
	body_sha256 VARCHAR(64) NOT NULL, 
	body BLOB NOT NULL, 
	headers JSON NOT NULL, 
	received_at DATETIME NOT NULL, 
	last_seen_at DATETIME NOT NULL, 
	duplicates INTEGER NOT NULL, 
	event_type VARCHAR(64), 
	order_id VARCHAR(128), 
	status VARCHAR(64), 
	updated_at DATETIME, 
	state VARCHAR(16) NOT NULL, 
	outcome VARCHAR(32), 
	error TEXT, 
	attempts INTEGER NOT NULL, 
	processed_at DATETIME, 
	received_owed INTEGER DEFAULT '0' NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (body_sha256)
);
INSERT INTO checkout_webhook_events VALUES(1,'3b842699651cdb88b2ad20bf11c44b74e32c8b1f7c32be63a18ebea3d36c7b70',X'7b226576656e74223a226f726465722d7374617475732d6368616e6765222c2264617461223a7b226f72646572223a7b225f6964223a22366230336362623731353036363632636664343535333963222c22757365724964223a22616432306436336334663430313137353466383938633761222c2275736572456d61696c223a22616461406578616d706c652e636f6d222c226d65726368616e744f72646572506172616d73223a2263686b5f303334336337646533366133613063333338343332613130222c22636f756e74727949736f436f6465223a224e47222c22666c6f77223a22726567756c6172222c2274797065223a226f6e5f72616d70222c22736f75726365223a22617069222c22737461747573223a226465706f7369745f6177616974696e67222c226465706f736974223a7b227061796d656e744368616e6e656c223a2262616e6b222c2263757272656e637954797065223a2266696174222c2263757272656e6379436f6465223a224e474e222c2263757272656e637944657461696c73223a7b22636f756e74727949736f436f6465223a224e47227d2c22636173686f7574223a7b2265786368616e676552617465223a313438302e302c2265786368616e676552617465416674657246656573223a313532322e3537313531342c22616d6f756e744265666f726546656573223a353030302e302c22616d6f756e74416674657246656573223a343836302e322c22616d6f756e744265666f726546656573557364223a332e3337383337382c22616d6f756e74416674657246656573557364223a332e3238333931387d7d2c227061796f7574223a7b227061796d656e744368616e6e656c223a2263727970746f222c2263757272656e637954797065223a2263727970746f222c2263757272656e6379436f6465223a2255534454222c2263757272656e637944657461696c73223a7b226e6574776f726b223a2243454c4f227d2c22636173686f7574223a7b2265786368616e676552617465223a312e302c2265786368616e676552617465416674657246656573223a302e39373230342c22616d6f756e744265666f726546656573223a332e3337383337382c22616d6f756e74416674657246656573223a332e3238333931382c22616d6f756e744265666f726546656573557364223a332e3337383337382c22616d6f756e74416674657246656573557364223a332e3238333931387d2c227472616e73616374696f6e223a7b226d657461223a7b22746f41646472657373223a22307835614165623630353346334539344339623941303966333336363934333545374566314265416564227d7d7d2c22637265617465644174223a22323032362d31312d32335430353a31343a33312e3337365a222c22757064617465644174223a22323032362d31312d32335430353a31343a33312e3337365a227d2c22757365724b7963223a7b7d7d7d','{"content-type": "application/json", "user-agent": "checkout-sandbox-webhooks/1", "x-signature": "272b40dffb83ee63dfe3110b67af07bcf60ba2519b570fec70b7a0a87fe0d8eb", "content-length": "1076"}','2026-11-23 05:14:31.383330','2026-11-23 05:14:31.383330',0,'order-status-change','6b03cbb71506662cfd45539c','deposit_awaiting','2026-11-23 05:14:31.376000','processed','applied',NULL,1,'2026-11-23 05:14:31.520145',1);
INSERT INTO checkout_webhook_events VALUES(2,'97d70de681edc779ea92410c977fa4bb6120ef2b1c48a3cd64d2290296cf0971',X'7b226576656e74223a226f726465722d7374617475732d6368616e6765222c2264617461223a7b226f72646572223a7b225f6964223a22366230336362623731353036363632636664343535333963222c22757365724964223a227573725f31222c2275736572456d61696c223a226275796572406578616d706c652e636f6d222c22636f756e74727949736f436f6465223a224e47222c22666c6f77223a22726567756c6172222c2274797065223a226f6e5f72616d70222c22736f75726365223a22617069222c22737461747573223a226465706f7369745f6177616974696e67222c226465706f736974223a7b227061796d656e744368616e6e656c223a2262616e6b222c2263757272656e637954797065223a2266696174222c2263757272656e6379436f6465223a224e474e227d2c227061796f7574223a7b227061796d656e744368616e6e656c223a2262616e6b222c2263757272656e637954797065223a2263727970746f222c2263757272656e6379436f6465223a2255534443227d2c22637265617465644174223a22323032362d31312d32325430313a30303a30302e3030305a222c22757064617465644174223a22323032362d31312d32325430313a30313a30302e3030305a222c226d65726368616e744f72646572506172616d73223a2263686b5f303334336337646533366133613063333338343332613130227d2c22757365724b7963223a7b7d7d7d','{"content-type": "application/json", "user-agent": "upstream-webhooks/1", "x-signature": "3b29831c623fe5c49e998c4bf1713497adaaa6cd153b848856040278ce16b700", "content-length": "535"}','2026-11-23 05:14:31.515666','2026-11-23 05:14:31.517114',1,'order-status-change','6b03cbb71506662cfd45539c','deposit_awaiting','2026-11-22 01:01:00.000000','processed','stale',NULL,1,'2026-11-23 05:14:31.520145',1);
INSERT INTO checkout_webhook_events VALUES(3,'e48d76ad905b55d836c66cf127c0b6c1fb1b7a7279c11c5b5e0f29a3761841bd',X'7b226576656e74223a226f726465722d7374617475732d6368616e6765222c2264617461223a7b226f72646572223a7b225f6964223a226f72645f666978747572655f6f74686572222c22757365724964223a227573725f31222c2275736572456d61696c223a226275796572406578616d706c652e636f6d222c22636f756e74727949736f436f6465223a224e47222c22666c6f77223a22726567756c6172222c2274797065223a226f6e5f72616d70222c22736f75726365223a22617069222c22737461747573223a226465706f7369745f6177616974696e67222c226465706f736974223a7b227061796d656e744368616e6e656c223a2262616e6b222c2263757272656e637954797065223a2266696174222c2263757272656e6379436f6465223a224e474e227d2c227061796f7574223a7b227061796d656e744368616e6e656c223a2262616e6b222c2263757272656e637954797065223a2263727970746f222c2263757272656e6379436f6465223a2255534443227d2c22637265617465644174223a22323032362d31312d32325430313a30303a30302e3030305a222c22757064617465644174223a22323032362d31312d32325430313a30303a30302e3030305a222c226d65726368616e744f72646572506172616d73223a2273686f702d7265662d39227d2c22757365724b7963223a7b7d7d7d','{"content-type": "application/json", "user-agent": "upstream-webhooks/1", "x-signature": "bdfc9b265a03430af041d1192495be45519eb3b18bd51a90772f1fad3eb053bb", "content-length": "510"}','2026-11-23 05:14:31.544142','2026-11-23 05:14:31.544142',0,'order-status-change','ord_fixture_other','deposit_awaiting','2026-11-22 01:00:00.000000','processed','applied',NULL,1,'2026-11-23 05:14:31.546050',1);
INSERT INTO checkout_webhook_events VALUES(4,'95a73d3996d0e79b9984fd377c0832892a111814ea2373c96f70b3d8e2a37e9c',X'7b226576656e74223a226f726465722d7374617475732d6368616e6765222c2264617461223a7b226f72646572223a7b225f6964223a226f72645f666978747572655f6f74686572222c22757365724964223a227573725f31222c2275736572456d61696c223a226275796572406578616d706c652e636f6d222c22636f756e74727949736f436f6465223a224e47222c22666c6f77223a22726567756c6172222c2274797065223a226f6e5f72616d70222c22736f75726365223a22617069222c22737461747573223a226465706f7369745f7265636569766564222c226465706f736974223a7b227061796d656e744368616e6e656c223a2262616e6b222c2263757272656e637954797065223a2266696174222c2263757272656e6379436f6465223a224e474e227d2c227061796f7574223a7b227061796d656e744368616e6e656c223a2262616e6b222c2263757272656e637954797065223a2263727970746f222c2263757272656e6379436f6465223a2255534443227d2c22637265617465644174223a22323032362d31312d32325430313a30303a30302e3030305a222c22757064617465644174223a22323032362d31312d32325430313a30353a30302e3030305a222c226d65726368616e744f72646572506172616d73223a2273686f702d7265662d39227d2c22757365724b7963223a7b7d7d7d','{"content-type": "application/json", "user-agent": "upstream-webhooks/1", "x-signature": "ab325fd77bde8616e5d0587fb04d83a2643ec1bba49b15ecadc1d8ff397d5349", "content-length": "510"}','2026-11-23 05:14:31.545240','2026-11-23 05:14:31.545240',0,'order-status-change','ord_fixture_other','deposit_received','2026-11-22 01:05:00.000000','processed','applied',NULL,1,'2026-11-23 05:14:31.546050',1);
CREATE TABLE checkout_orders (
	order_id VARCHAR(128) NOT NULL, 
	flow VARCHAR(32), 
	status VARCHAR(64) NOT NULL, 
	previous_status VARCHAR(64), 
	status_updated_at DATETIME, 
	status_source VARCHAR(16) NOT NULL, 
	order_params TEXT, 
	summary JSON, 
	full_order JSON, 
	fetched_at DATETIME, 
	hash VARCHAR(256), 
	refreshed_at DATETIME NOT NULL, 
	version INTEGER NOT NULL, 
	fetch_due_at DATETIME, 
	fetch_seq INTEGER NOT NULL, 
	fetch_attempts INTEGER NOT NULL, 
	fetch_error TEXT, 
	created_at DATETIME NOT NULL, 
	PRIMARY KEY (order_id)
);
INSERT INTO checkout_orders VALUES('6b03cbb71506662cfd45539c','onramp','deposit_awaiting',NULL,'2026-11-23 05:14:31.376000','webhook','chk_0343c7de36a3a0c338432a10','{"_id": "6b03cbb71506662cfd45539c", "userId": "ad20d63c4f4011754f898c7a", "userEmail": "ada@example.com", "merchantOrderParams": "chk_0343c7de36a3a0c338432a10", "countryIsoCode": "NG", "flow": "regular", "type": "on_ramp", "source": "api", "status": "deposit_awaiting", "deposit": {"paymentChannel": "bank", "currencyType": "fiat", "currencyCode": "NGN", "currencyDetails": {"countryIsoCode": "NG"}, "cashout": {"exchangeRate": 1480.0, "exchangeRateAfterFees": 1522.571514, "amountBeforeFees": 5000.0, "amountAfterFees": 4860.2, "amountBeforeFeesUsd": 3.378378, "amountAfterFeesUsd": 3.283918}}, "payout": {"paymentChannel": "crypto", "currencyType": "crypto", "currencyCode": "USDT", "currencyDetails": {"network": "CELO"}, "cashout": {"exchangeRate": 1.0, "exchangeRateAfterFees": 0.97204, "amountBeforeFees": 3.378378, "amountAfterFees": 3.283918, "amountBeforeFeesUsd": 3.378378, "amountAfterFeesUsd": 3.283918}, "transaction": {"meta": {"toAddress": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"}}}, "createdAt": "2026-11-23T05:14:31.376Z", "updatedAt": "2026-11-23T05:14:31.376Z"}','{"_id": "6b03cbb71506662cfd45539c", "orderId": "6b03cbb71506662cfd45539c", "status": "swap_initiated", "date": "2026-11-23T05:14:31.376Z", "createdAt": "2026-11-23T05:14:31.376Z", "updatedAt": "2026-11-23T05:14:31.376Z", "email": "ada@example.com", "localCurrencyAmount": 5000, "currencyIsoCode": "NGN", "countryIsoCode": "NG", "paymentChannel": "bank", "amount": 3.378378, "amountCrypto": 3.283918, "network": "CELO", "asset": "USDT", "address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "orderParams": "chk_0343c7de36a3a0c338432a10", "redirectUrl": "http://shop.test/checkout/s/LyaCOIzOapvvSpS7DZw2olKfitVxRjPpmOjXlXfgv2c/return", "expiresAt": "2026-11-23T05:19:31.376Z", "feePercent": 2.5, "feePercentService": 1.5, "feePercentPartner": 1, "feeAmountUsd": 0.08446, "feeAmountLocalCurrency": 125, "feeAmountUsdService": 0.050676, "feeAmountLocalCurrencyService": 75, "feeAmountUsdPartner": 0.033784, "feeAmountLocalCurrencyPartner": 50, "gasAmountUsd": 0.01, "gasAmountLocalCurrency": 14.8, "resumeUrl": "http://shop.test/checkout/sandbox/orders/6b03cbb71506662cfd45539c", "transferInstructions": {"type": "manual", "transferDetails": [{"id": "recipientBankName", "label": "Bank", "value": "Sandbox Microfinance Bank"}, {"id": "recipientBankAccountNumber", "label": "Account number", "value": "0123456789"}, {"id": "recipientBankAccountName", "label": "Account name", "value": "Checkout Sandbox Agent"}, {"id": "amountToSend", "label": "Amount", "value": "5000 NGN"}, {"id": "bankTransferNarration", "label": "Narration", "value": "FD45539C", "description": "Type this in the transfer''s description field"}], "fieldsToConfirmOrder": [], "instructionsText": "Send exactly 5000 NGN to the account below, with the narration shown, then confirm that you have paid.", "warningText": "Type the narration exactly: a transfer without it cannot be matched to your order."}}','2026-11-23 05:14:31.540592',NULL,'2026-11-23 05:14:31.520145',1,NULL,1,0,NULL,'2026-11-23 05:14:31.520145');
INSERT INTO checkout_orders VALUES('ord_fixture_other','onramp','deposit_received','deposit_awaiting','2026-11-22 01:05:00.000000','webhook','shop-ref-9','{"_id": "ord_fixture_other", "userId": "usr_1", "userEmail": "buyer@example.com", "countryIsoCode": "NG", "flow": "regular", "type": "on_ramp", "source": "api", "status": "deposit_received", "deposit": {"paymentChannel": "bank", "currencyType": "fiat", "currencyCode": "NGN"}, "payout": {"paymentChannel": "bank", "currencyType": "crypto", "currencyCode": "USDC"}, "createdAt": "2026-11-22T01:00:00.000Z", "updatedAt": "2026-11-22T01:05:00.000Z", "merchantOrderParams": "shop-ref-9"}',NULL,NULL,NULL,'2026-11-23 05:14:31.546050',2,NULL,2,1,'OrderNotAvailable: ORDER_NOT_AVAILABLE','2026-11-23 05:14:31.546050');
CREATE TABLE checkout_signal_log (
	id INTEGER NOT NULL, 
	order_id VARCHAR(128) NOT NULL, 
	status VARCHAR(64) NOT NULL, 
	previous_status VARCHAR(64), 
	flow VARCHAR(32), 
	order_params TEXT, 
	event_id INTEGER, 
	created_at DATETIME NOT NULL, 
	state VARCHAR(16) NOT NULL, 
	claimed_at DATETIME, 
	dispatched_at DATETIME, 
	attempts INTEGER NOT NULL, 
	error TEXT, 
	PRIMARY KEY (id), 
	CONSTRAINT uq_checkout_signal_log_order_status UNIQUE (order_id, status), 
	FOREIGN KEY(event_id) REFERENCES checkout_webhook_events (id)
);
INSERT INTO checkout_signal_log VALUES(1,'6b03cbb71506662cfd45539c','deposit_awaiting',NULL,'onramp','chk_0343c7de36a3a0c338432a10',1,'2026-11-23 05:14:31.520145','dispatched','2026-11-23 05:14:31.532622','2026-11-23 05:14:31.535344',1,NULL);
INSERT INTO checkout_signal_log VALUES(2,'ord_fixture_other','deposit_awaiting',NULL,'onramp','shop-ref-9',3,'2026-11-23 05:14:31.546050','dispatched','2026-11-23 05:14:31.549421','2026-11-23 05:14:31.550200',1,NULL);
INSERT INTO checkout_signal_log VALUES(3,'ord_fixture_other','deposit_received','deposit_awaiting','onramp','shop-ref-9',4,'2026-11-23 05:14:31.546050','dispatched','2026-11-23 05:14:31.549421','2026-11-23 05:14:31.550200',1,NULL);
CREATE TABLE checkout_signal_outbox (
	id INTEGER NOT NULL, 
	signal VARCHAR(32) NOT NULL, 
	event_id INTEGER NOT NULL, 
	duplicate INTEGER NOT NULL, 
	created_at DATETIME NOT NULL, 
	state VARCHAR(16) NOT NULL, 
	claimed_at DATETIME, 
	dispatched_at DATETIME, 
	attempts INTEGER NOT NULL, 
	error TEXT, 
	PRIMARY KEY (id), 
	FOREIGN KEY(event_id) REFERENCES checkout_webhook_events (id)
);
INSERT INTO checkout_signal_outbox VALUES(1,'webhook_received',2,1,'2026-11-23 05:14:31.517114','dispatched','2026-11-23 05:14:31.528524','2026-11-23 05:14:31.531609',1,NULL);
INSERT INTO checkout_signal_outbox VALUES(2,'webhook_received',1,0,'2026-11-23 05:14:31.520145','dispatched','2026-11-23 05:14:31.528524','2026-11-23 05:14:31.531609',1,NULL);
INSERT INTO checkout_signal_outbox VALUES(3,'webhook_received',2,0,'2026-11-23 05:14:31.520145','dispatched','2026-11-23 05:14:31.528524','2026-11-23 05:14:31.531609',1,NULL);
INSERT INTO checkout_signal_outbox VALUES(4,'webhook_received',3,0,'2026-11-23 05:14:31.546050','dispatched','2026-11-23 05:14:31.548033','2026-11-23 05:14:31.548897',1,NULL);
INSERT INTO checkout_signal_outbox VALUES(5,'webhook_received',4,0,'2026-11-23 05:14:31.546050','dispatched','2026-11-23 05:14:31.548033','2026-11-23 05:14:31.548897',1,NULL);
CREATE INDEX ix_checkout_sessions_order_id ON checkout_sessions (order_id);
CREATE INDEX ix_checkout_webhook_events_state_id ON checkout_webhook_events (state, id);
CREATE INDEX ix_checkout_webhook_events_order_id ON checkout_webhook_events (order_id);
CREATE INDEX ix_checkout_orders_fetch_due_at ON checkout_orders (fetch_due_at);
CREATE INDEX ix_checkout_signal_log_state_id ON checkout_signal_log (state, id);
CREATE INDEX ix_checkout_signal_outbox_state_id ON checkout_signal_outbox (state, id);
COMMIT;
