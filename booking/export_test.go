package booking

// DueSQL is the reminder sweep's query, for the test of its cost.
const DueSQL = dueSQL
