-- Issue 14, finding 3: stored answers of POST /api/v1/assets/upload-link held the upload URL (a credential) in
-- clear. They are sealed to the caller from now on; the ones stored before are dropped (a retry with such a key mints
-- a new link, which is harmless: a link costs nothing and the unused one expires in 15 minutes).
DELETE FROM idempotency_keys WHERE route = 'POST /api/v1/assets/upload-link' AND body NOT LIKE 'aead1.%';
