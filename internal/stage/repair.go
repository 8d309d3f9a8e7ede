package stage

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/model"
	"github.com/toolgate/toolgate/internal/model/modelclient"
	"github.com/toolgate/toolgate/streams"
)

// DefaultRepairTimeout bounds one request to the repair model. It stays well
// below the gate consumers' AckWait (30s), which bounds a whole delivery.
const DefaultRepairTimeout = 20 * time.Second

// RepairFlags declares the repair model's flags on fs, each defaulting to
// its TOOLGATE_REPAIR_* variable read through getenv, and returns the
// function that builds the model.Config once fs is parsed:
//
//	--repair-protocol     TOOLGATE_REPAIR_PROTOCOL     openai-chat or anthropic
//	--repair-endpoint     TOOLGATE_REPAIR_ENDPOINT     base URL; empty: no repair model
//	--repair-model        TOOLGATE_REPAIR_MODEL
//	--repair-api-key-file TOOLGATE_REPAIR_API_KEY_FILE a mounted secret
//	--repair-timeout      TOOLGATE_REPAIR_TIMEOUT      per request, default 20s
//	--repair-max-retries  TOOLGATE_REPAIR_MAX_RETRIES  default 3; negative: none
//	--repair-tokens-field TOOLGATE_REPAIR_TOKENS_FIELD auto, max_tokens or max_completion_tokens
//	--repair-azure        TOOLGATE_REPAIR_AZURE        Azure OpenAI (implied by *.openai.azure.com)
//	--repair-azure-api-version TOOLGATE_REPAIR_AZURE_API_VERSION
//
// The key itself is read only from TOOLGATE_REPAIR_API_KEY (a flag would
// show it in process listings) or the key file, through modelclient.LoadAPIKey.
// Without an endpoint the returned Config is zero and the repair gate calls
// nothing; setting other repair options without one is an error, since it
// is surely a mistake.
func RepairFlags(fs *flag.FlagSet, getenv func(string) string) func() (model.Config, error) {
	def := func(k, d string) string { return EnvOr(getenv, k, d) }
	protocol := fs.String("repair-protocol", def("TOOLGATE_REPAIR_PROTOCOL", string(model.ProtocolOpenAIChat)), "repair model wire protocol: openai-chat or anthropic (TOOLGATE_REPAIR_PROTOCOL)")
	endpoint := fs.String("repair-endpoint", def("TOOLGATE_REPAIR_ENDPOINT", ""), "repair model base URL, e.g. http://127.0.0.1:8000/v1 or https://api.anthropic.com (TOOLGATE_REPAIR_ENDPOINT); empty: failures go back to the caller unrepaired")
	modelName := fs.String("repair-model", def("TOOLGATE_REPAIR_MODEL", ""), "repair model name (TOOLGATE_REPAIR_MODEL)")
	keyFile := fs.String("repair-api-key-file", def("TOOLGATE_REPAIR_API_KEY_FILE", ""), "file holding the repair model's API key (TOOLGATE_REPAIR_API_KEY_FILE); or set TOOLGATE_REPAIR_API_KEY")
	timeout := fs.String("repair-timeout", def("TOOLGATE_REPAIR_TIMEOUT", DefaultRepairTimeout.String()), "timeout of one repair request (TOOLGATE_REPAIR_TIMEOUT)")
	retries := fs.String("repair-max-retries", def("TOOLGATE_REPAIR_MAX_RETRIES", "3"), "retries of a repair request on 408/429/5xx/timeouts; negative: none (TOOLGATE_REPAIR_MAX_RETRIES)")
	tokensField := fs.String("repair-tokens-field", def("TOOLGATE_REPAIR_TOKENS_FIELD", string(model.TokensAuto)), "openai-chat field for the output budget: auto (max_completion_tokens for o1/o3/o4-mini/gpt-5*, else max_tokens), max_tokens or max_completion_tokens (TOOLGATE_REPAIR_TOKENS_FIELD)")
	azure := fs.String("repair-azure", def("TOOLGATE_REPAIR_AZURE", "false"), "the endpoint is Azure OpenAI: api-key header, deployment URL with api-version; implied by a *.openai.azure.com host (TOOLGATE_REPAIR_AZURE)")
	apiVersion := fs.String("repair-azure-api-version", def("TOOLGATE_REPAIR_AZURE_API_VERSION", ""), "Azure OpenAI api-version, default "+model.DefaultAzureAPIVersion+" (TOOLGATE_REPAIR_AZURE_API_VERSION)")
	return func() (model.Config, error) {
		az, err := strconv.ParseBool(*azure)
		if err != nil {
			return model.Config{}, fmt.Errorf("stage: --repair-azure %q is not true or false (TOOLGATE_REPAIR_AZURE)", *azure)
		}
		key, err := modelclient.LoadAPIKey(getenv("TOOLGATE_REPAIR_API_KEY"), *keyFile)
		if err != nil {
			return model.Config{}, err
		}
		if *endpoint == "" {
			if *modelName != "" || key != "" {
				return model.Config{}, errors.New("stage: a repair model or API key is set but no endpoint: set TOOLGATE_REPAIR_ENDPOINT (--repair-endpoint), or unset the other TOOLGATE_REPAIR_* variables")
			}
			return model.Config{}, nil
		}
		d, err := time.ParseDuration(*timeout)
		if err != nil || d <= 0 {
			return model.Config{}, fmt.Errorf("stage: --repair-timeout %q is not a positive duration such as 20s (TOOLGATE_REPAIR_TIMEOUT)", *timeout)
		}
		n, err := strconv.Atoi(*retries)
		if err != nil {
			return model.Config{}, fmt.Errorf("stage: --repair-max-retries %q is not a whole number (TOOLGATE_REPAIR_MAX_RETRIES)", *retries)
		}
		if n == 0 {
			n = -1 // model.Config's 0 means its default; on the command line 0 means none
		}
		tf := model.TokensField(*tokensField)
		if tf == model.TokensAuto {
			tf = "" // the zero value is auto
		}
		return model.Config{
			Protocol: model.Protocol(*protocol), Endpoint: *endpoint, Model: *modelName, APIKey: key,
			Timeout: d, MaxRetries: n,
			TokensField: tf, Azure: az, APIVersion: *apiVersion,
		}, nil
	}
}

// repairClient builds the repair model's client when this process runs the
// repair stage and an endpoint is configured; nil otherwise. It logs where
// the model is, never the key.
func repairClient(cfg Config, log zerolog.Logger) (*modelclient.Client, error) {
	runs := false
	for _, s := range cfg.Stages {
		runs = runs || s == streams.Repair
	}
	if !runs {
		return nil, nil
	}
	if cfg.Repair.Endpoint == "" {
		log.Info().Msg("no repair endpoint (TOOLGATE_REPAIR_ENDPOINT): failed calls go back to the caller as tool-result errors")
		return nil, nil
	}
	c, err := modelclient.NewClient(cfg.Repair, nil)
	if err != nil {
		return nil, fmt.Errorf("stage: repair model: %w", err)
	}
	rc := c.Config()
	log.Info().Str("protocol", string(rc.Protocol)).Str("endpoint", rc.Endpoint).Str("model", rc.Model).
		Bool("api_key_set", rc.APIKey != "").Str("tokens_field", string(rc.TokensField)).Bool("azure", rc.AzureOpenAI()).Dur("timeout", rc.Timeout).Int("max_retries", rc.MaxRetries).
		Dur("budget", repairBudget(cfg.Settings)).Msg("repair model configured")
	return c, nil
}

// repairBudget bounds one delivery of the repair gate: four fifths of the
// AckWait, so JetStream never redelivers a call while its repair is still
// being asked for.
func repairBudget(s streams.Settings) time.Duration {
	return s.AckWait - s.AckWait/5
}
