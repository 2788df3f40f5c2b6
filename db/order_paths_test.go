package db_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
)

// orderSeedEnv replays one seed of TestOrderPathsAgree.
const orderSeedEnv = "PETSTORE_TEST_ORDER_SEED"

// TestOrderPathsAgree places the same random sequences of orders, batches
// of orders placed together (group commit), cancels, completes, stock and
// price changes on two fresh PostgreSQL schemas: one places lone orders
// with PostgreSQL's one statement, as the store does, the other in Go, as
// it places every other order. Every answer must be
// the same, and afterwards every row of orders, pets and inventory and
// every event (type, data and time). The seeds are a few fixed ones and
// one new each run; a failure names its seed, which orderSeedEnv replays.
func TestOrderPathsAgree(t *testing.T) {
	dbtest.RequirePostgres(t)
	seeds := []uint64{1, 2, rand.Uint64()}
	if v := os.Getenv(orderSeedEnv); v != "" {
		seed, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", orderSeedEnv, v, err)
		}
		seeds = []uint64{seed}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			t.Parallel() // each seed has schemas of its own
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("replay: %s=%d go test -run TestOrderPathsAgree ./db/", orderSeedEnv, seed)
				}
			})
			comparePaths(t, seed, 150)
		})
	}
}

// comparePaths runs steps random operations of seed through both paths.
func comparePaths(t *testing.T, seed uint64, steps int) {
	ctx := context.Background()
	statement, inGo := dbtest.Postgres(t), dbtest.Postgres(t)
	inGo.PlaceLoneOrdersInGo()
	stores := []*db.Store{statement, inGo}
	t0 := dbtest.Present(t)
	clocks := []*dbtest.Clock{pinClock(t, statement, t0), pinClock(t, inGo, t0)}

	w, other := newPathWorld(t, ctx, statement), newPathWorld(t, ctx, inGo)
	if fmt.Sprint(w) != fmt.Sprint(other) {
		t.Fatalf("the two schemas start apart: %+v and %+v", w, other)
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for step := range steps {
		op := w.randomOp(rng, t0)
		answers := make([]string, len(stores))
		for i, s := range stores {
			clocks[i].Set(t0.Add(time.Duration(step+1) * time.Second))
			answers[i] = op.apply(ctx, s)
		}
		if answers[0] != answers[1] {
			t.Fatalf("seed %d, step %d, %s:\n statement path: %s\n        Go path: %s", seed, step, op, answers[0], answers[1])
		}
		w.learn(answers[0])
	}
	for _, q := range []string{
		`SELECT row_to_json(t)::text FROM orders t ORDER BY t.id`,
		`SELECT row_to_json(t)::text FROM pets t ORDER BY t.id`,
		`SELECT row_to_json(t)::text FROM inventory t ORDER BY t.pet_id`,
		`SELECT row_to_json(t)::text FROM events t ORDER BY t.id`,
	} {
		var rows [2][]string
		for i, s := range stores {
			if err := s.DB().SelectContext(ctx, &rows[i], q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		for i := range max(len(rows[0]), len(rows[1])) {
			var a, b string
			if i < len(rows[0]) {
				a = rows[0][i]
			}
			if i < len(rows[1]) {
				b = rows[1][i]
			}
			if a != b {
				t.Fatalf("seed %d, %s, row %d:\n statement path: %s\n        Go path: %s", seed, q, i, a, b)
			}
		}
	}
}

// pathWorld is what the random operations pick from: the pets (one never
// existed, one may be deleted), an API key, and how many orders were
// placed.
type pathWorld struct {
	category int64
	pets     []int64
	key      int64
	orders   int64
}

// newPathWorld writes the same starting catalog into s: four pets with
// prices, one free, stocks 0 to 3.
func newPathWorld(t *testing.T, ctx context.Context, s *db.Store) pathWorld {
	t.Helper()
	w := pathWorld{category: MustCreateCategory(t, ctx, s, "Dogs").ID, key: mustAPIKey(t, ctx, s, "k").ID}
	for i, price := range []string{"129.99", "0", "5.05", "1234567.89"} {
		p := MustCreatePet(t, ctx, s, w.category, fmt.Sprint("Rex ", i), int64(i))
		name := p.Name
		if _, err := s.UpdatePet(ctx, p.ID, db.NewPet{Name: &name, CategoryID: &w.category, Price: &price}); err != nil {
			t.Fatal(err)
		}
		w.pets = append(w.pets, p.ID)
	}
	w.pets = append(w.pets, 999_999) // never existed
	return w
}

// pathOp is one random operation, drawn once and applied to both stores.
type pathOp struct {
	kind    string
	batch   []db.NewOrder // the orders of a batch (group commit)
	pet     int64
	n       int64 // quantity, stock or price in cents
	owner   db.Owner
	ship    *string
	orderID int64
	name    string // the pet's name, for a price change
	cat     int64
}

func (op pathOp) String() string {
	return fmt.Sprintf("%s pet=%d n=%d order=%d owner=%+v ship=%v batch=%d", op.kind, op.pet, op.n, op.orderID, op.owner, op.ship != nil, len(op.batch))
}

// randomOp draws an operation: mostly orders (some too large, some for a
// pet that is not there), then cancels and completes of any order id
// (some not placed), stock changes of 0 to 6, price changes and, rarely,
// a deletion.
func (w *pathWorld) randomOp(rng *rand.Rand, t0 time.Time) pathOp {
	op := pathOp{pet: w.pets[rng.IntN(len(w.pets)-1)], cat: w.category}
	if rng.IntN(12) == 0 {
		op.pet = w.pets[len(w.pets)-1]
	}
	switch r := rng.IntN(100); {
	case r < 10:
		// A batch of 2 to 6 orders, some for the same pet, as group
		// commit places orders that arrive together.
		op.kind = "batch"
		for range 2 + rng.IntN(5) {
			pet := w.pets[rng.IntN(len(w.pets))]
			op.batch = append(op.batch, db.NewOrder{PetID: &pet, Quantity: ptr(int64(1 + rng.IntN(3)))})
		}
		if rng.IntN(2) == 0 {
			op.owner = db.Owner{APIKeyID: w.key}
		}
	case r < 45:
		op.kind, op.n = "order", int64(1+rng.IntN(3))
		if rng.IntN(8) == 0 {
			op.n = int64(4 + rng.IntN(20))
		}
		switch rng.IntN(3) {
		case 0:
			op.owner = db.Owner{APIKeyID: w.key}
		case 1:
			op.owner = db.Owner{ShopperID: fmt.Sprint("shopper-", rng.IntN(2))}
		}
		if rng.IntN(3) == 0 {
			d := t0.Add(time.Duration(1+rng.IntN(90)) * 24 * time.Hour).Truncate(time.Second).Format(time.RFC3339)
			op.ship = &d
		}
	case r < 60:
		op.kind, op.orderID = "cancel", 1+rng.Int64N(w.orders+2)
	case r < 72:
		op.kind, op.orderID = "complete", 1+rng.Int64N(w.orders+2)
	case r < 92:
		op.kind, op.n = "stock", rng.Int64N(7)
	case r < 98:
		op.kind, op.n, op.name = "price", rng.Int64N(100_000), fmt.Sprint("Rex ", op.pet)
	default:
		op.kind = "delete"
	}
	return op
}

// learn counts the orders the answer placed.
func (w *pathWorld) learn(answer string) {
	type placed struct {
		ID       int64 `json:"id"`
		Quantity int64 `json:"quantity"`
	}
	var os []placed
	if json.Unmarshal([]byte(answer), &os) != nil {
		var o placed
		if json.Unmarshal([]byte(answer), &o) != nil {
			return
		}
		os = []placed{o}
	}
	for _, o := range os {
		if o.ID > w.orders && o.Quantity > 0 {
			w.orders = o.ID
		}
	}
}

// apply runs op on s and returns its answer: the JSON of what it returned,
// or the error's code and message.
func (op pathOp) apply(ctx context.Context, s *db.Store) string {
	var v any
	var err error
	switch op.kind {
	case "order":
		v, err = s.PlaceOrder(ctx, op.owner, db.NewOrder{PetID: &op.pet, Quantity: &op.n, ShipDate: op.ship})
	case "batch":
		orders, errs := s.PlaceLoneOrdersTogether(ctx, op.owner, op.batch)
		answers := make([]any, len(orders))
		for i, o := range orders {
			answers[i] = o
			if errs[i] != nil {
				answers[i] = fmt.Sprintf("error %s: %v", db.ErrorCode(errs[i]), errs[i])
			}
		}
		v = answers
	case "cancel":
		err = s.CancelOrder(ctx, op.orderID, nil)
	case "complete":
		v, err = s.UpdateOrder(ctx, op.orderID, db.OrderUpdate{Complete: ptr(true)})
	case "stock":
		v, err = s.SetInventory(ctx, op.pet, db.InventoryUpdate{Quantity: &op.n})
	case "price":
		price := db.Money(op.n).String()
		v, err = s.UpdatePet(ctx, op.pet, db.NewPet{Name: &op.name, CategoryID: &op.cat, Price: &price})
	case "delete":
		err = s.DeletePet(ctx, op.pet)
	}
	if err != nil {
		return fmt.Sprintf("error %s: %v", db.ErrorCode(err), err)
	}
	b, jerr := json.Marshal(v)
	if jerr != nil {
		return "unmarshallable: " + jerr.Error()
	}
	return string(b)
}
