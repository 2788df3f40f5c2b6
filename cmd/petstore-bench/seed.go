package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"petstore/db"
	"petstore/web/client"
)

// benchStock is the stock of the pets orders go to: more than any run can
// order, so POST /api/store/orders never meets an empty shelf (it is the
// API's maximum).
const benchStock = 1_000_000

// apiClient calls the store's JSON API with the bench key. Its calls
// that are not measured (setting up, checking, polling) go through
// web/client, as a program calls the API (retries, idempotency keys,
// pacing); http, the bare client, is for the rows that time the server
// alone (the photo uploads).
type apiClient struct {
	base   string
	key    string
	http   *http.Client
	client *client.Client
}

func newAPIClient(base, key string, conns int) *apiClient {
	transport := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}
	c, err := client.New(client.Config{URL: base, Key: key, Transport: &client.Transport{Base: transport}})
	if err != nil {
		panic(err) // base is the bench's own server address
	}
	return &apiClient{base: base, key: key, http: &http.Client{Timeout: 30 * time.Second, Transport: transport}, client: c}
}

// do sends body (JSON, when not nil) through web/client and decodes a
// want-status answer into out (when not nil). It returns the raw answer
// body too.
func (a *apiClient) do(ctx context.Context, method, path string, body any, want int, out any) ([]byte, error) {
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ans, err := a.client.Do(ctx, method, path, b)
	var refusal *client.Error
	if errors.As(err, &refusal) {
		return nil, fmt.Errorf("%s %s: status %d, want %d: %v", method, path, refusal.Status, want, refusal)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if ans.Status != want {
		return ans.Body, fmt.Errorf("%s %s: status %d, want %d: %s", method, path, ans.Status, want, bytes.TrimSpace(ans.Body))
	}
	if out != nil {
		if err := json.Unmarshal(ans.Body, out); err != nil {
			return ans.Body, fmt.Errorf("%s %s: decode: %w", method, path, err)
		}
	}
	return ans.Body, nil
}

// stockedPets is how many of the seeded pets get benchStock units: the
// pets the orders go to. The others keep the stock a new pet has (1).
const stockedPets = 1000

// seedPets adds n pets in a new category: the category through the API,
// the pets and their inventory in one SQL transaction on the database
// itself. Through the API, 10,000 pets take about a minute on PostgreSQL
// here (every write transaction queues for the events outbox lock), far
// over the bench's budget. The API then checks the rows look right. It
// returns the new pets' ids and the stocked ones, the first stockedPets.
func seedPets(ctx context.Context, api *apiClient, databaseURL string, n int) (ids, stocked []int64, err error) {
	var cat struct {
		ID int64 `json:"id"`
	}
	if _, err := api.do(ctx, http.MethodPost, "/api/categories",
		map[string]any{"name": "Bench", "description": "Pets made by petstore-bench."}, http.StatusCreated, &cat); err != nil {
		return nil, nil, err
	}
	if ids, err = insertPets(ctx, databaseURL, cat.ID, n); err != nil {
		return nil, nil, fmt.Errorf("seed pets: %w", err)
	}
	stocked = ids[:min(n, stockedPets)]
	for _, check := range []struct {
		id   int64
		want int64
	}{{stocked[0], benchStock}, {ids[len(ids)-1], 1}} {
		var item struct {
			Quantity int64  `json:"quantity"`
			Status   string `json:"status"`
		}
		if _, err := api.do(ctx, http.MethodGet, "/api/store/inventory/"+strconv.FormatInt(check.id, 10), nil, http.StatusOK, &item); err != nil {
			return nil, nil, fmt.Errorf("check seeded pet: %w", err)
		}
		if item.Quantity != check.want || item.Status != "available" {
			return nil, nil, fmt.Errorf("seeded pet %d: the API shows %d %s, want %d available", check.id, item.Quantity, item.Status, check.want)
		}
	}
	return ids, stocked, nil
}

// wallClock is the clock the bench writes and reads rows by: the real
// binary it measures runs on the system clock, so the bench uses the same
// one (UTC, to the microsecond, as petstore's main makes it).
func wallClock() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// insertPets writes n available pets of category cat with their inventory
// rows, as CreatePet would, and gives the first stockedPets benchStock
// units. The SQL is the subset both engines speak.
func insertPets(ctx context.Context, databaseURL string, cat int64, n int) ([]int64, error) {
	dialect, dsn, err := db.ParseURL(databaseURL)
	if err != nil {
		return nil, err
	}
	conn, err := sql.Open(dialect, dsn)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	now := wallClock()
	if _, err := tx.ExecContext(ctx, `INSERT INTO pets (name, name_key, category_id, status, created_at, updated_at)
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $1)
		SELECT 'Bench pet ' || i, 'bench pet ' || i, $2, 'available', $3, $3 FROM n`, n, cat, now); err != nil {
		return nil, fmt.Errorf("insert pets: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO inventory (pet_id, quantity, updated_at)
		SELECT id, 1, $2 FROM pets WHERE category_id = $1`, cat, now); err != nil {
		return nil, fmt.Errorf("insert inventory: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT id FROM pets WHERE category_id = $1 ORDER BY id`, cat)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, 0, n)
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(ids) != n {
		return nil, fmt.Errorf("inserted %d pets, want %d", len(ids), n)
	}
	last := ids[min(n, stockedPets)-1]
	if _, err := tx.ExecContext(ctx, `UPDATE inventory SET quantity = $1 WHERE pet_id BETWEEN $2 AND $3`, benchStock, ids[0], last); err != nil {
		return nil, fmt.Errorf("stock pets: %w", err)
	}
	if dialect == db.DialectPostgres {
		// The local server runs without autovacuum, so tables keep whatever
		// statistics they had, or none; with stale ones the planner was seen
		// listing a page by hashing and sorting every pet. Production keeps
		// the statistics current: measure that state.
		if _, err := tx.ExecContext(ctx, "ANALYZE"); err != nil {
			return nil, fmt.Errorf("analyze: %w", err)
		}
	}
	return ids, tx.Commit()
}

// petsPage is the body GET /api/pets?limit=20 answers: the bytes the bare
// ceiling route serves.
func petsPage(ctx context.Context, api *apiClient) ([]byte, error) {
	raw, err := api.do(ctx, http.MethodGet, "/api/pets?limit=20", nil, http.StatusOK, nil)
	if err != nil {
		return nil, err
	}
	var pets []json.RawMessage
	if err := json.Unmarshal(raw, &pets); err != nil || len(pets) != 20 {
		return nil, fmt.Errorf("GET /api/pets?limit=20: want 20 pets, got %d (%v)", len(pets), err)
	}
	return raw, nil
}
