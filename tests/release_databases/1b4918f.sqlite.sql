-- A checkout database made by the release at commit 1b4918f (sqlite), with rows in it, for the upgrade
-- tests (tests/test_schema.py). Made by tests/release_databases/make_dumps.sh: that release's own
-- code (tests/release_databases/make_database.py, run in a worktree of commit 1b4918f with its
-- package and test helpers) made the tables at its start-up and the rows through its pages,
-- webhook receiver and commands on its embedded sandbox; then sqlite3 .dump (3.40.1) wrote this file.
-- Sessions expire in 2099 (one UPDATE, so that the tests can open them). Ids: 1b4918f.sqlite.json.
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
INSERT INTO checkout_sessions VALUES('7rzkP1BJWTDqAylRa7xg6e3VuFMQnscHaUmH8TnzRu4','onramp',NULL,'UmriZD0ZTfFalgf7_UOJ-Db044FfAQI_GZRUZvpYbvA','{}','[]','{"v": 2, "answers": {"countryIsoCode": "NG", "paymentChannel": "bank", "carrierCode": null, "network": "CELO", "asset": "USDT", "currency": "local", "amount": "5000", "address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "memo": "", "email": "ada@example.com"}, "fields": {}, "quote": {"id": "6b03cbb2146ad6e612a938c7", "fetched_at": 1795410866.1436715, "params": {"network": "CELO", "asset": "USDT", "currency": "local", "amount": "5000", "countryIsoCode": "NG", "paymentChannel": "bank", "carrierCode": null}, "offer": {"countryIsoCode": "NG", "currencyIsoCode": "NGN", "exchangeRate": 1480, "cryptoExchangeRate": 1480, "paymentChannel": "bank"}, "required_fields": {}, "cashout": {"localCurrencyAmount": 5000, "totalAmountUsd": 3.378378, "withdrawAmountUsd": 3.283918, "totalAmountCrypto": 3.378378, "withdrawAmountCrypto": 3.283918, "feePercent": 2.5, "feePercentService": 1.5, "feePercentPartner": 1, "feeAmountUsd": 0.08446, "feeAmountUsdService": 0.050676, "feeAmountUsdPartner": 0.033784, "feeAmountLocalCurrency": 125, "feeAmountLocalCurrencyService": 75, "feeAmountLocalCurrencyPartner": 50, "feeAmountCrypto": 0.08446, "feeAmountCryptoService": 0.050676, "feeAmountCryptoPartner": 0.033784, "gasAmountUsd": 0.01, "gasAmountLocalCurrency": 14.8}}, "progress": {"done": ["choose", "wallet"], "answered": ["choose", "wallet"], "reviewed": true}, "wallet": {"network": "CELO", "notice": null}, "reference": "chk_ac3c08a79bfbba66cc750a9a", "pending": null, "order": {"id": "6b03cbb2146ad6e612a938ca", "resume_url": "http://shop.test/checkout/sandbox/orders/6b03cbb2146ad6e612a938ca", "transfer_type": "manual"}, "events": {"order_created": true, "statuses": ["deposit_awaiting"]}}','start','6b03cbb2146ad6e612a938ca',NULL,NULL,9,'2026-11-23 05:14:25.912027','2026-11-23 05:14:26.365371','2099-01-01 00:00:00');
INSERT INTO checkout_sessions VALUES('FBlXiiZEDosglZBV5koFkKYuYOT1nf5yXL4hlLTRAp4','onramp','U0Mt_5wQHdM42UQsH8i-HZvV','m4YOSd_Iqe2-bbp1icf9DO-ucls0z9U361bmWjLe3T0','{"network": "CELO", "orderParams": "basket-42", "asset": "USDC", "countryIsoCode": "NG", "email": "ada@example.com"}','["network"]','{"v": 2, "fields": {}, "answers": {"countryIsoCode": "NG", "paymentChannel": "bank", "carrierCode": null, "asset": "USDT", "currency": "local", "amount": "5000"}, "quote": {"id": "6b03cbb2146ad6e612a938cb", "fetched_at": 1795410866.563307, "params": {"network": "CELO", "asset": "USDT", "currency": "local", "amount": "5000", "countryIsoCode": "NG", "paymentChannel": "bank", "carrierCode": null}, "offer": {"countryIsoCode": "NG", "currencyIsoCode": "NGN", "exchangeRate": 1480, "cryptoExchangeRate": 1480, "paymentChannel": "bank"}, "required_fields": {}, "cashout": {"localCurrencyAmount": 5000, "totalAmountUsd": 3.378378, "withdrawAmountUsd": 3.283918, "totalAmountCrypto": 3.378378, "withdrawAmountCrypto": 3.283918, "feePercent": 2.5, "feePercentService": 1.5, "feePercentPartner": 1, "feeAmountUsd": 0.08446, "feeAmountUsdService": 0.050676, "feeAmountUsdPartner": 0.033784, "feeAmountLocalCurrency": 125, "feeAmountLocalCurrencyService": 75, "feeAmountLocalCurrencyPartner": 50, "feeAmountCrypto": 0.08446, "feeAmountCryptoService": 0.050676, "feeAmountCryptoPartner": 0.033784, "gasAmountUsd": 0.01, "gasAmountLocalCurrency": 14.8}}, "progress": {"done": ["choose"], "answered": ["choose"], "reviewed": false}}','start',NULL,NULL,NULL,2,'2026-11-23 05:14:26.549537','2026-11-23 05:14:26.564231','2099-01-01 00:00:00');
INSERT INTO checkout_sessions VALUES('gENc3MvwQFtQoV3eJ85fXGzVHnvHMuokVEAFKUdRa2Y','offramp',NULL,'cbZshQ4YJ6GeBe_ny7q3Vwu-_gVdqYgRSqmwlFR9qv8','{}','[]','{"v": 2}','start',NULL,NULL,NULL,1,'2026-11-23 05:14:26.566999','2026-11-23 05:14:26.566999','2099-01-01 00:00:00');
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
INSERT INTO checkout_webhook_events VALUES(1,'6a28b6fc6196089fd09a950492788313b85c240519f9794c33eb002a563b4570',X'7b226576656e74223a226f726465722d7374617475732d6368616e6765222c2264617461223a7b226f72646572223a7b225f6964223a22366230336362623231343661643665363132613933386361222c22757365724964223a22616432306436336334663430313137353466383938633761222c2275736572456d61696c223a22616461406578616d706c652e636f6d222c226d65726368616e744f72646572506172616d73223a2263686b5f616333633038613739626662626136366363373530613961222c22636f756e74727949736f436f6465223a224e47222c22666c6f77223a22726567756c6172222c2274797065223a226f6e5f72616d70222c22736f75726365223a22617069222c22737461747573223a226465706f7369745f6177616974696e67222c226465706f736974223a7b227061796d656e744368616e6e656c223a2262616e6b222c2263757272656e637954797065223a2266696174222c2263757272656e6379436f6465223a224e474e222c2263757272656e637944657461696c73223a7b22636f756e74727949736f436f6465223a224e47227d2c22636173686f7574223a7b2265786368616e676552617465223a313438302e302c2265786368616e676552617465416674657246656573223a313532322e3537313531342c22616d6f756e744265666f726546656573223a353030302e302c22616d6f756e74416674657246656573223a343836302e322c22616d6f756e744265666f726546656573557364223a332e3337383337382c22616d6f756e74416674657246656573557364223a332e3238333931387d7d2c227061796f7574223a7b227061796d656e744368616e6e656c223a2263727970746f222c2263757272656e637954797065223a2263727970746f222c2263757272656e6379436f6465223a2255534454222c2263757272656e637944657461696c73223a7b226e6574776f726b223a2243454c4f227d2c22636173686f7574223a7b2265786368616e676552617465223a312e302c2265786368616e676552617465416674657246656573223a302e39373230342c22616d6f756e744265666f726546656573223a332e3337383337382c22616d6f756e74416674657246656573223a332e3238333931382c22616d6f756e744265666f726546656573557364223a332e3337383337382c22616d6f756e74416674657246656573557364223a332e3238333931387d2c227472616e73616374696f6e223a7b226d657461223a7b22746f41646472657373223a22307835614165623630353346334539344339623941303966333336363934333545374566314265416564227d7d7d2c22637265617465644174223a22323032362d31312d32335430353a31343a32362e3330375a222c22757064617465644174223a22323032362d31312d32335430353a31343a32362e3330375a227d2c22757365724b7963223a7b7d7d7d','{"content-type": "application/json", "user-agent": "checkout-sandbox-webhooks/1", "x-signature": "1d530c9ac490a1d3c9a36c925f4b5216b1fb66c6ee8d3bdaa0de2b9a7b5c7712", "content-length": "1076"}','2026-11-23 05:14:26.329198','2026-11-23 05:14:26.329198',0,'order-status-change','6b03cbb2146ad6e612a938ca','deposit_awaiting','2026-11-23 05:14:26.307000','processed','applied',NULL,1,'2026-11-23 05:14:26.464820',1);
INSERT INTO checkout_webhook_events VALUES(2,'eabceef3f1f02a73c71adf12f5a81fe0190f0672914576b2d7128f7c425c4984',X'7b226576656e74223a226f726465722d7374617475732d6368616e6765222c2264617461223a7b226f72646572223a7b225f6964223a22366230336362623231343661643665363132613933386361222c22757365724964223a227573725f31222c2275736572456d61696c223a226275796572406578616d706c652e636f6d222c22636f756e74727949736f436f6465223a224e47222c22666c6f77223a22726567756c6172222c2274797065223a226f6e5f72616d70222c22736f75726365223a22617069222c22737461747573223a226465706f7369745f6177616974696e67222c226465706f736974223a7b227061796d656e744368616e6e656c223a2262616e6b222c2263757272656e637954797065223a2266696174222c2263757272656e6379436f6465223a224e474e227d2c227061796f7574223a7b227061796d656e744368616e6e656c223a2262616e6b222c2263757272656e637954797065223a2263727970746f222c2263757272656e6379436f6465223a2255534443227d2c22637265617465644174223a22323032362d31312d32325430313a30303a30302e3030305a222c22757064617465644174223a22323032362d31312d32325430313a30313a30302e3030305a222c226d65726368616e744f72646572506172616d73223a2263686b5f616333633038613739626662626136366363373530613961227d2c22757365724b7963223a7b7d7d7d','{"content-type": "application/json", "user-agent": "upstream-webhooks/1", "x-signature": "4b9007d8ff49600b5ab84744fef85f7e4ee378394951fd0e4d3345e472e013e7", "content-length": "535"}','2026-11-23 05:14:26.450416','2026-11-23 05:14:26.451637',1,'order-status-change','6b03cbb2146ad6e612a938ca','deposit_awaiting','2026-11-22 01:01:00.000000','processed','stale',NULL,1,'2026-11-23 05:14:26.464820',1);
INSERT INTO checkout_webhook_events VALUES(3,'e48d76ad905b55d836c66cf127c0b6c1fb1b7a7279c11c5b5e0f29a3761841bd',X'7b226576656e74223a226f726465722d7374617475732d6368616e6765222c2264617461223a7b226f72646572223a7b225f6964223a226f72645f666978747572655f6f74686572222c22757365724964223a227573725f31222c2275736572456d61696c223a226275796572406578616d706c652e636f6d222c22636f756e74727949736f436f6465223a224e47222c22666c6f77223a22726567756c6172222c2274797065223a226f6e5f72616d70222c22736f75726365223a22617069222c22737461747573223a226465706f7369745f6177616974696e67222c226465706f736974223a7b227061796d656e744368616e6e656c223a2262616e6b222c2263757272656e637954797065223a2266696174222c2263757272656e6379436f6465223a224e474e227d2c227061796f7574223a7b227061796d656e744368616e6e656c223a2262616e6b222c2263757272656e637954797065223a2263727970746f222c2263757272656e6379436f6465223a2255534443227d2c22637265617465644174223a22323032362d31312d32325430313a30303a30302e3030305a222c22757064617465644174223a22323032362d31312d32325430313a30303a30302e3030305a222c226d65726368616e744f72646572506172616d73223a2273686f702d7265662d39227d2c22757365724b7963223a7b7d7d7d','{"content-type": "application/json", "user-agent": "upstream-webhooks/1", "x-signature": "bdfc9b265a03430af041d1192495be45519eb3b18bd51a90772f1fad3eb053bb", "content-length": "510"}','2026-11-23 05:14:26.519859','2026-11-23 05:14:26.519859',0,'order-status-change','ord_fixture_other','deposit_awaiting','2026-11-22 01:00:00.000000','processed','applied',NULL,1,'2026-11-23 05:14:26.522842',1);
INSERT INTO checkout_webhook_events VALUES(4,'95a73d3996d0e79b9984fd377c0832892a111814ea2373c96f70b3d8e2a37e9c',X'7b226576656e74223a226f726465722d7374617475732d6368616e6765222c2264617461223a7b226f72646572223a7b225f6964223a226f72645f666978747572655f6f74686572222c22757365724964223a227573725f31222c2275736572456d61696c223a226275796572406578616d706c652e636f6d222c22636f756e74727949736f436f6465223a224e47222c22666c6f77223a22726567756c6172222c2274797065223a226f6e5f72616d70222c22736f75726365223a22617069222c22737461747573223a226465706f7369745f7265636569766564222c226465706f736974223a7b227061796d656e744368616e6e656c223a2262616e6b222c2263757272656e637954797065223a2266696174222c2263757272656e6379436f6465223a224e474e227d2c227061796f7574223a7b227061796d656e744368616e6e656c223a2262616e6b222c2263757272656e637954797065223a2263727970746f222c2263757272656e6379436f6465223a2255534443227d2c22637265617465644174223a22323032362d31312d32325430313a30303a30302e3030305a222c22757064617465644174223a22323032362d31312d32325430313a30353a30302e3030305a222c226d65726368616e744f72646572506172616d73223a2273686f702d7265662d39227d2c22757365724b7963223a7b7d7d7d','{"content-type": "application/json", "user-agent": "upstream-webhooks/1", "x-signature": "ab325fd77bde8616e5d0587fb04d83a2643ec1bba49b15ecadc1d8ff397d5349", "content-length": "510"}','2026-11-23 05:14:26.521552','2026-11-23 05:14:26.521552',0,'order-status-change','ord_fixture_other','deposit_received','2026-11-22 01:05:00.000000','processed','applied',NULL,1,'2026-11-23 05:14:26.522842',1);
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
INSERT INTO checkout_orders VALUES('6b03cbb2146ad6e612a938ca','onramp','deposit_awaiting',NULL,'2026-11-23 05:14:26.307000','webhook','chk_ac3c08a79bfbba66cc750a9a','{"_id": "6b03cbb2146ad6e612a938ca", "userId": "ad20d63c4f4011754f898c7a", "userEmail": "ada@example.com", "merchantOrderParams": "chk_ac3c08a79bfbba66cc750a9a", "countryIsoCode": "NG", "flow": "regular", "type": "on_ramp", "source": "api", "status": "deposit_awaiting", "deposit": {"paymentChannel": "bank", "currencyType": "fiat", "currencyCode": "NGN", "currencyDetails": {"countryIsoCode": "NG"}, "cashout": {"exchangeRate": 1480.0, "exchangeRateAfterFees": 1522.571514, "amountBeforeFees": 5000.0, "amountAfterFees": 4860.2, "amountBeforeFeesUsd": 3.378378, "amountAfterFeesUsd": 3.283918}}, "payout": {"paymentChannel": "crypto", "currencyType": "crypto", "currencyCode": "USDT", "currencyDetails": {"network": "CELO"}, "cashout": {"exchangeRate": 1.0, "exchangeRateAfterFees": 0.97204, "amountBeforeFees": 3.378378, "amountAfterFees": 3.283918, "amountBeforeFeesUsd": 3.378378, "amountAfterFeesUsd": 3.283918}, "transaction": {"meta": {"toAddress": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"}}}, "createdAt": "2026-11-23T05:14:26.307Z", "updatedAt": "2026-11-23T05:14:26.307Z"}','{"_id": "6b03cbb2146ad6e612a938ca", "orderId": "6b03cbb2146ad6e612a938ca", "status": "swap_initiated", "date": "2026-11-23T05:14:26.307Z", "createdAt": "2026-11-23T05:14:26.307Z", "updatedAt": "2026-11-23T05:14:26.307Z", "email": "ada@example.com", "localCurrencyAmount": 5000, "currencyIsoCode": "NGN", "countryIsoCode": "NG", "paymentChannel": "bank", "amount": 3.378378, "amountCrypto": 3.283918, "network": "CELO", "asset": "USDT", "address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "orderParams": "chk_ac3c08a79bfbba66cc750a9a", "redirectUrl": "http://shop.test/checkout/o/eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..joaON1hKDJ97aMVB.qkqo9Zqp5jePpHAfx5bmMyebTrlFPb1YUxmn0q_-8t2tvt8Zdn6ax33sDQ.ElMyac2cN3thdqIPOV-KzA", "expiresAt": "2026-11-23T05:19:26.307Z", "feePercent": 2.5, "feePercentService": 1.5, "feePercentPartner": 1, "feeAmountUsd": 0.08446, "feeAmountLocalCurrency": 125, "feeAmountUsdService": 0.050676, "feeAmountLocalCurrencyService": 75, "feeAmountUsdPartner": 0.033784, "feeAmountLocalCurrencyPartner": 50, "gasAmountUsd": 0.01, "gasAmountLocalCurrency": 14.8, "resumeUrl": "http://shop.test/checkout/sandbox/orders/6b03cbb2146ad6e612a938ca", "transferInstructions": {"type": "manual", "transferDetails": [{"id": "recipientBankName", "label": "Bank", "value": "Sandbox Microfinance Bank"}, {"id": "recipientBankAccountNumber", "label": "Account number", "value": "0123456789"}, {"id": "recipientBankAccountName", "label": "Account name", "value": "Checkout Sandbox Agent"}, {"id": "amountToSend", "label": "Amount", "value": "5000 NGN"}, {"id": "bankTransferNarration", "label": "Narration", "value": "12A938CA", "description": "Type this in the transfer''s description field"}], "fieldsToConfirmOrder": [], "instructionsText": "Send exactly 5000 NGN to the account below, with the narration shown, then confirm that you have paid.", "warningText": "Type the narration exactly: a transfer without it cannot be matched to your order."}}','2026-11-23 05:14:26.608072',NULL,'2026-11-23 05:14:26.608072',1,NULL,1,0,NULL,'2026-11-23 05:14:26.464820');
INSERT INTO checkout_orders VALUES('ord_fixture_other','onramp','deposit_received','deposit_awaiting','2026-11-22 01:05:00.000000','webhook','shop-ref-9','{"_id": "ord_fixture_other", "userId": "usr_1", "userEmail": "buyer@example.com", "countryIsoCode": "NG", "flow": "regular", "type": "on_ramp", "source": "api", "status": "deposit_received", "deposit": {"paymentChannel": "bank", "currencyType": "fiat", "currencyCode": "NGN"}, "payout": {"paymentChannel": "bank", "currencyType": "crypto", "currencyCode": "USDC"}, "createdAt": "2026-11-22T01:00:00.000Z", "updatedAt": "2026-11-22T01:05:00.000Z", "merchantOrderParams": "shop-ref-9"}',NULL,NULL,NULL,'2026-11-23 05:14:26.522842',2,NULL,2,1,'OrderNotAvailable: ORDER_NOT_AVAILABLE','2026-11-23 05:14:26.522842');
CREATE TABLE checkout_order_watch (
	order_id VARCHAR(128) NOT NULL, 
	flow VARCHAR(32) NOT NULL, 
	next_check_at DATETIME NOT NULL, 
	quiet_checks INTEGER NOT NULL, 
	last_checked_at DATETIME, 
	last_error TEXT, 
	PRIMARY KEY (order_id)
);
INSERT INTO checkout_order_watch VALUES('6b03cbb2146ad6e612a938ca','onramp','2026-11-23 05:14:26.583051',1,'2026-11-23 05:14:26.581051',NULL);
INSERT INTO checkout_order_watch VALUES('ord_fixture_other','onramp','2026-11-23 05:14:26.583051',1,'2026-11-23 05:14:26.581051','OrderNotAvailable: ORDER_NOT_AVAILABLE');
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
INSERT INTO checkout_signal_log VALUES(1,'6b03cbb2146ad6e612a938ca','deposit_awaiting',NULL,'onramp','chk_ac3c08a79bfbba66cc750a9a',1,'2026-11-23 05:14:26.464820','dispatched','2026-11-23 05:14:26.492795','2026-11-23 05:14:26.495693',1,NULL);
INSERT INTO checkout_signal_log VALUES(2,'ord_fixture_other','deposit_awaiting',NULL,'onramp','shop-ref-9',3,'2026-11-23 05:14:26.522842','dispatched','2026-11-23 05:14:26.530831','2026-11-23 05:14:26.531702',1,NULL);
INSERT INTO checkout_signal_log VALUES(3,'ord_fixture_other','deposit_received','deposit_awaiting','onramp','shop-ref-9',4,'2026-11-23 05:14:26.522842','dispatched','2026-11-23 05:14:26.530831','2026-11-23 05:14:26.531702',1,NULL);
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
INSERT INTO checkout_signal_outbox VALUES(1,'webhook_received',2,1,'2026-11-23 05:14:26.451637','dispatched','2026-11-23 05:14:26.483852','2026-11-23 05:14:26.487712',1,NULL);
INSERT INTO checkout_signal_outbox VALUES(2,'webhook_received',1,0,'2026-11-23 05:14:26.464820','dispatched','2026-11-23 05:14:26.483852','2026-11-23 05:14:26.487712',1,NULL);
INSERT INTO checkout_signal_outbox VALUES(3,'webhook_received',2,0,'2026-11-23 05:14:26.464820','dispatched','2026-11-23 05:14:26.483852','2026-11-23 05:14:26.487712',1,NULL);
INSERT INTO checkout_signal_outbox VALUES(4,'webhook_received',3,0,'2026-11-23 05:14:26.522842','dispatched','2026-11-23 05:14:26.529077','2026-11-23 05:14:26.530197',1,NULL);
INSERT INTO checkout_signal_outbox VALUES(5,'webhook_received',4,0,'2026-11-23 05:14:26.522842','dispatched','2026-11-23 05:14:26.529077','2026-11-23 05:14:26.530197',1,NULL);
CREATE INDEX ix_checkout_sessions_order_id ON checkout_sessions (order_id);
CREATE INDEX ix_checkout_webhook_events_order_id ON checkout_webhook_events (order_id);
CREATE INDEX ix_checkout_webhook_events_state_id ON checkout_webhook_events (state, id);
CREATE INDEX ix_checkout_orders_fetch_due_at ON checkout_orders (fetch_due_at);
CREATE INDEX ix_checkout_order_watch_next_check_at ON checkout_order_watch (next_check_at);
CREATE INDEX ix_checkout_signal_log_state_id ON checkout_signal_log (state, id);
CREATE INDEX ix_checkout_signal_outbox_state_id ON checkout_signal_outbox (state, id);
COMMIT;
