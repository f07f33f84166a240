import ConcurrencySupport

extension BuildState {
    /// `output/.passforge/downloads.csv`: passTypeIdentifier,serialNumber,download path — for mailings.
    package func downloadsCSV(keys: [String]? = nil, jobs: Int = 1, appending extraRows: String = "") -> String {
        // Sorting the keys, not the records: records are large values, and moving them costs more than the sort.
        let keys = keys ?? passes.keys.sorted()
        let passes = self.passes
        let chunk = 4096
        let parts = ParallelLoop.map(Array(stride(from: 0, to: keys.count, by: chunk)), jobs: jobs) { start in
            var rows = ""
            rows.reserveCapacity(chunk * 96)
            for key in keys[start..<min(keys.count, start + chunk)] {
                let record = passes[key]!
                rows += record.typeIdentifier
                rows += ","
                rows += record.identifier
                rows += ","
                rows += record.downloadPath
                rows += "\n"
            }
            return rows
        }
        var csv = "passTypeIdentifier,serialNumber,download path\n"
        csv.reserveCapacity(parts.reduce(csv.utf8.count + extraRows.utf8.count) { $0 + $1.utf8.count })
        for part in parts { csv += part }
        csv += extraRows
        return csv
    }

}
