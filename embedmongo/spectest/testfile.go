package spectest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// File is one test file of the unified test format.
type File struct {
	Path              string           `bson:"-"`
	Description       string           `bson:"description"`
	SchemaVersion     string           `bson:"schemaVersion"`
	RunOnRequirements []requirement    `bson:"runOnRequirements"`
	CreateEntities    []bson.D         `bson:"createEntities"`
	InitialData       []collectionData `bson:"initialData"`
	Tests             []Test           `bson:"tests"`
	YAMLAnchors       bson.RawValue    `bson:"_yamlAnchors"`
}

// Name is the file's base name, used in reports and for -run selection.
func (f *File) Name() string { return filepath.Base(f.Path) }

// Test is one test case.
type Test struct {
	Description       string                    `bson:"description"`
	RunOnRequirements []requirement             `bson:"runOnRequirements"`
	SkipReason        *string                   `bson:"skipReason"`
	Operations        []operation               `bson:"operations"`
	ExpectEvents      []expectedEventsForClient `bson:"expectEvents"`
	Outcome           []collectionData          `bson:"outcome"`
}

type requirement struct {
	MinServerVersion string   `bson:"minServerVersion"`
	MaxServerVersion string   `bson:"maxServerVersion"`
	Topologies       []string `bson:"topologies"`
	Serverless       string   `bson:"serverless"`
	ServerParameters bson.D   `bson:"serverParameters"`
	Auth             *bool    `bson:"auth"`
	AuthMechanism    string   `bson:"authMechanism"`
	CSFLE            any      `bson:"csfle"`
}

type collectionData struct {
	CollectionName string `bson:"collectionName"`
	DatabaseName   string `bson:"databaseName"`
	CreateOptions  bson.D `bson:"createOptions"`
	Documents      bson.A `bson:"documents"`
}

type operation struct {
	Name                 string         `bson:"name"`
	Object               string         `bson:"object"`
	Arguments            bson.D         `bson:"arguments"`
	ExpectError          *expectedError `bson:"expectError"`
	ExpectResult         bson.RawValue  `bson:"expectResult"`
	SaveResultAsEntity   string         `bson:"saveResultAsEntity"`
	IgnoreResultAndError bool           `bson:"ignoreResultAndError"`
}

type expectedError struct {
	IsError            *bool         `bson:"isError"`
	IsClientError      *bool         `bson:"isClientError"`
	IsTimeoutError     *bool         `bson:"isTimeoutError"`
	ErrorContains      *string       `bson:"errorContains"`
	ErrorCode          *int64        `bson:"errorCode"`
	ErrorCodeName      *string       `bson:"errorCodeName"`
	ErrorLabelsContain []string      `bson:"errorLabelsContain"`
	ErrorLabelsOmit    []string      `bson:"errorLabelsOmit"`
	ErrorResponse      bson.D        `bson:"errorResponse"`
	ExpectResult       bson.RawValue `bson:"expectResult"`
	WriteErrors        bson.D        `bson:"writeErrors"`
	WriteConcernErrors bson.A        `bson:"writeConcernErrors"`
}

type expectedEventsForClient struct {
	Client            string   `bson:"client"`
	EventType         string   `bson:"eventType"`
	Events            []bson.D `bson:"events"`
	IgnoreExtraEvents bool     `bson:"ignoreExtraEvents"`
}

// supportedSchema is the newest schema version this runner interprets; files of the same major
// version and a minor version up to this one are accepted.
const supportedSchema = "1.21"

// LoadFile parses a test file written in (relaxed or canonical) extended JSON.
func LoadFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f File
	if err := bson.UnmarshalExtJSON(data, false, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	f.Path = path
	sv, max := parseVersion(f.SchemaVersion), parseVersion(supportedSchema)
	if f.SchemaVersion == "" || sv[0] != max[0] || compareVersions(sv, max) > 0 {
		return nil, fmt.Errorf("%s: unsupported schemaVersion %q (runner supports %s)", filepath.Base(path), f.SchemaVersion, supportedSchema)
	}
	return &f, nil
}

// ListFiles returns the JSON test files of dir, sorted by name.
func ListFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}
